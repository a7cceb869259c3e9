import type { ResourceContents } from './resource.js';

/** Textual `application/*` types (besides `text/*` and the +json/+xml/+yaml suffixes). */
const TEXT_APPLICATION_TYPES = new Set([
  'application/json',
  'application/xml',
  'application/yaml',
  'application/x-yaml',
  'application/toml',
  'application/javascript',
  'application/ecmascript',
  'application/x-javascript',
  'application/sql',
  'application/graphql',
  'application/x-sh',
  'application/x-ndjson',
]);

/**
 * Whether bytes of this media type are meant as text: `text/*`, the
 * structured-syntax suffixes `+json`, `+xml` and `+yaml` (RFC 6839), and
 * common textual `application/*` types. Parameters and case are ignored.
 */
export function isTextLike(mimeType: string): boolean {
  const essence = (mimeType.split(';')[0] ?? '').trim().toLowerCase();
  return (
    essence.startsWith('text/') ||
    TEXT_APPLICATION_TYPES.has(essence) ||
    essence.endsWith('+json') ||
    essence.endsWith('+xml') ||
    essence.endsWith('+yaml')
  );
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * One `contents` entry for bytes a source read: `text` when the type is
 * textual and the bytes are valid UTF-8, otherwise a base64 `blob`, so bytes
 * are never mangled by a lossy decode (MCP 2026-07-28, Resources, "Binary data MUST
 * be properly encoded").
 */
export function bytesToContents(uri: string, mimeType: string, bytes: Uint8Array): ResourceContents {
  if (isTextLike(mimeType)) {
    try {
      return { uri, mimeType, text: utf8.decode(bytes) };
    } catch {
      // Not UTF-8 despite the type (e.g. a Latin-1 file): fall through to a blob.
    }
  }
  return blobContents(uri, mimeType, bytes);
}

/**
 * The bytes behind a `blob` entry made by {@link bytesToContents}, kept on
 * the entry (not enumerable, so no copy, comparison or JSON sees it) for a
 * response writer that streams the base64 encoding in pieces instead of
 * building, scanning and copying one large string.
 */
export const BLOB_BYTES: unique symbol = Symbol('mcpgw.blobBytes');

/** A `blob` entry whose base64 text is made only when something reads `blob`. */
function blobContents(uri: string, mimeType: string, bytes: Uint8Array): ResourceContents {
  let blob: string | undefined;
  const contents = {
    uri,
    mimeType,
    get blob(): string {
      blob ??= Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
      return blob;
    },
  };
  Object.defineProperty(contents, BLOB_BYTES, { value: bytes, enumerable: false });
  return contents;
}

/**
 * A blob's bytes as they arrive from the backend: exactly `byteLength` bytes,
 * iterable once. Iteration throws when the backend fails or sends a length
 * other than `byteLength`; `cancel` frees the backend stream (and whatever
 * slot it holds) when nothing will read it, and is a no-op once iteration
 * has ended.
 */
export interface BlobByteStream extends AsyncIterable<Uint8Array> {
  readonly byteLength: number;
  cancel(): void;
}

/**
 * The byte stream behind a `blob` entry made by {@link streamedBlobContents}
 * (not enumerable, like {@link BLOB_BYTES}): the response writer streams its
 * base64 encoding into the response as the bytes arrive, so a large object
 * is neither held whole nor encoded as one string.
 */
export const BLOB_STREAM: unique symbol = Symbol('mcpgw.blobStream');

/**
 * A `blob` entry whose bytes are still arriving. It can be written exactly
 * once, by a response writer that knows {@link BLOB_STREAM}; its `blob`
 * cannot be read as a string (a clear error rather than a silent copy of a
 * large object), so whoever would store or copy contents must check for it
 * with {@link isStreamedBlob} first.
 */
export function streamedBlobContents(uri: string, mimeType: string, stream: BlobByteStream): ResourceContents {
  const contents = {
    uri,
    mimeType,
    get blob(): string {
      throw new Error(`The blob of ${uri} is streamed into the response and has no text form`);
    },
  };
  Object.defineProperty(contents, BLOB_STREAM, { value: stream, enumerable: false });
  return contents;
}

/** Whether a contents entry is a blob still arriving (see {@link streamedBlobContents}). */
export function isStreamedBlob(
  contents: unknown,
): contents is ResourceContents & { readonly [BLOB_STREAM]: BlobByteStream } {
  return typeof contents === 'object' && contents !== null && BLOB_STREAM in contents;
}

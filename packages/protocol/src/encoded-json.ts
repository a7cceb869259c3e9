import { BLOB_BYTES, BLOB_STREAM, isStreamedBlob } from '@mcpgw/core';
import type { JsonRpcResponseBody } from './dispatch.js';
import type { Part, StreamedBody } from './streamed-body.js';
import { BASE64_PIECE, base64Length, streamParts } from './streamed-body.js';

/**
 * A JSON value held as its serialized text, e.g. a cached page's `resources`
 * array: the response is written around it, so a cache hit neither parses
 * the stored text nor serializes the same value again. Whoever builds one
 * vouches that `text` is one complete, valid JSON value.
 */
export class EncodedJson {
  /**
   * @param bytes the UTF-8 encoding of `text`, when the holder keeps it: the
   *   response is then assembled as bytes and the text is never encoded again.
   */
  constructor(
    readonly text: string,
    readonly bytes?: Uint8Array,
  ) {}

  /** Whoever serializes it with plain `JSON.stringify` still gets the right value (at the price of a parse). */
  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/**
 * The bytes of a response body, or its text when nothing in it is held as
 * bytes. Members of `result` that are {@link EncodedJson} are written as
 * they are (their bytes when they have them); everything else goes through
 * `JSON.stringify`. Object member order carries no meaning in JSON
 * (RFC 8259 section 4), so the result parses as the same value either way.
 * Blobs with their bytes at hand (`BLOB_BYTES`) are encoded to base64 in
 * pieces straight into the response buffer, so no one large base64 string
 * is built, scanned for escapes and copied again on the way to the socket.
 * Blobs whose bytes are still arriving (`BLOB_STREAM`) make the body a
 * {@link StreamedBody}: the same bytes, written as they come.
 */
export function serializeResponse(body: JsonRpcResponseBody): string | Buffer | StreamedBody {
  if (!('result' in body)) return JSON.stringify(body);
  const parts: Part[] = [];
  let text = `{"jsonrpc":"2.0","id":${JSON.stringify(body.id)},"result":{`;
  let first = true;
  for (const [name, value] of Object.entries(body.result)) {
    if (value === undefined) continue;
    text += `${first ? '' : ','}${JSON.stringify(name)}:`;
    first = false;
    if (value instanceof EncodedJson) {
      if (value.bytes === undefined) {
        text += value.text;
      } else {
        parts.push(text, { raw: value.bytes });
        text = '';
      }
    } else if (name === 'contents' && Array.isArray(value) && value.some(isBinaryBlob)) {
      text += '[';
      value.forEach((entry: unknown, index) => {
        if (index > 0) text += ',';
        if (!hasBlobBytes(entry) && !isStreamedBlob(entry)) {
          text += JSON.stringify(entry);
          return;
        }
        let members = '';
        // Keys, not entries: reading `blob` would build the very string this avoids (or throw, for a stream).
        for (const key of Object.keys(entry)) {
          const member = key === 'blob' ? undefined : (entry as Record<string, unknown>)[key];
          if (member !== undefined) members += `${JSON.stringify(key)}:${JSON.stringify(member)},`;
        }
        parts.push(
          `${text}{${members}"blob":"`,
          isStreamedBlob(entry) ? { stream: entry[BLOB_STREAM] } : { base64: entry[BLOB_BYTES] },
        );
        text = '"}';
      });
      text += ']';
    } else {
      text += JSON.stringify(value);
    }
  }
  text += '}}';
  if (parts.length === 0) return text;
  parts.push(text);
  return parts.some((part) => typeof part === 'object' && 'stream' in part) ? streamParts(parts) : assemble(parts);
}

function assemble(parts: readonly Part[]): Buffer {
  let length = 0;
  for (const part of parts) {
    length +=
      typeof part === 'string'
        ? Buffer.byteLength(part)
        : 'raw' in part
          ? part.raw.byteLength
          : 'base64' in part
            ? base64Length(part.base64.byteLength)
            : 0;
  }
  const out = Buffer.allocUnsafe(length);
  let offset = 0;
  for (const part of parts) {
    if (typeof part === 'string') {
      offset += out.write(part, offset, 'utf8');
    } else if ('raw' in part) {
      out.set(part.raw, offset);
      offset += part.raw.byteLength;
    } else if ('base64' in part) {
      const bytes = Buffer.from(part.base64.buffer, part.base64.byteOffset, part.base64.byteLength);
      for (let at = 0; at < bytes.length; at += BASE64_PIECE) {
        offset += out.write(bytes.subarray(at, at + BASE64_PIECE).toString('base64'), offset, 'latin1');
      }
    }
  }
  return out;
}

function hasBlobBytes(entry: unknown): entry is Record<string, unknown> & { [BLOB_BYTES]: Uint8Array } {
  return typeof entry === 'object' && entry !== null && BLOB_BYTES in entry;
}

/** A blob whose bytes are at hand or still arriving: written from the bytes, never from its `blob` text. */
const isBinaryBlob = (entry: unknown) => hasBlobBytes(entry) || isStreamedBlob(entry);

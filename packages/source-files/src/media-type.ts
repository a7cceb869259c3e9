import { extname } from 'node:path';
import { lookup } from 'mime-types';

/** mime-types maps `.ts` to MPEG transport streams; in a document folder it is TypeScript. */
const OVERRIDES: Readonly<Record<string, string>> = {
  '.ts': 'text/x-typescript',
  '.mts': 'text/x-typescript',
  '.cts': 'text/x-typescript',
  '.tsx': 'text/x-typescript',
};

/** The XDG type for folders (server-resources.md, "file://"). */
export const DIRECTORY_MIME_TYPE = 'inode/directory';

/** The media type of a file, from its extension; `application/octet-stream` when unknown. */
export function mediaTypeOf(name: string): string {
  return OVERRIDES[extname(name).toLowerCase()] ?? (lookup(name) || 'application/octet-stream');
}

const TEXT_APPLICATION_TYPES = new Set([
  'application/json',
  'application/xml',
  'application/yaml',
  'application/x-yaml',
  'application/toml',
  'application/javascript',
  'application/ecmascript',
  'application/sql',
  'application/graphql',
  'application/x-sh',
  'application/x-ndjson',
]);

/**
 * Whether files of this type are served as `text` (when their bytes are valid
 * UTF-8) rather than as a base64 `blob`: `text/*`, the structured-syntax
 * suffixes `+json`, `+xml` and `+yaml` (RFC 6839), and common textual
 * `application/*` types.
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

import { lookup } from 'mime-types';

/** Content-Types that say nothing (SDK and console defaults), so the extension decides. */
const GENERIC_TYPES = new Set(['application/octet-stream', 'binary/octet-stream', '']);

/** Guess from the key's extension; `application/octet-stream` when unknown. */
export function mimeTypeFromKey(key: string): string {
  const name = key.slice(key.lastIndexOf('/') + 1);
  return lookup(name) || 'application/octet-stream';
}

/**
 * The media type of an object: the stored Content-Type (parameters dropped)
 * unless it is a generic one, else the extension's.
 */
export function effectiveMimeType(storedContentType: string | undefined, key: string): string {
  const stored = (storedContentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return GENERIC_TYPES.has(stored) ? mimeTypeFromKey(key) : stored;
}

const TEXT_APPLICATION_TYPES = new Set([
  'application/json',
  'application/xml',
  'application/javascript',
  'application/ecmascript',
  'application/x-javascript',
  'application/yaml',
  'application/x-yaml',
  'application/toml',
  'application/sql',
  'application/graphql',
  'application/x-sh',
  'application/x-ndjson',
]);

/** Whether bytes of this type are meant as text (read() still requires valid UTF-8). */
export function isTextLike(mimeType: string): boolean {
  return (
    mimeType.startsWith('text/') ||
    mimeType.endsWith('+json') ||
    mimeType.endsWith('+xml') ||
    TEXT_APPLICATION_TYPES.has(mimeType)
  );
}

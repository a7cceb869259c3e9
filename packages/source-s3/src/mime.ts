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

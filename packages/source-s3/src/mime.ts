import { mediaTypeOf, UNKNOWN_MEDIA_TYPE } from '@mcpgw/core';

/** Content-Types that say nothing (SDK and console defaults), so the extension decides. */
const GENERIC_TYPES = new Set([UNKNOWN_MEDIA_TYPE, 'binary/octet-stream', '']);

/**
 * The media type of an object: the stored Content-Type (parameters dropped)
 * unless it is a generic one, else the key's extension's.
 */
export function effectiveMimeType(storedContentType: string | undefined, key: string): string {
  const stored = (storedContentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return GENERIC_TYPES.has(stored) ? mediaTypeOf(key) : stored;
}

import { lookup } from 'mime-types';

/** When nothing better is known (RFC 2046 section 4.5.1: "arbitrary binary data"). */
export const UNKNOWN_MEDIA_TYPE = 'application/octet-stream';

/**
 * mime-types maps `.ts` to MPEG transport streams; in a document folder or a
 * bucket of sources it is TypeScript, and a client should see text.
 */
const OVERRIDES: Readonly<Record<string, string>> = {
  '.ts': 'text/x-typescript',
  '.mts': 'text/x-typescript',
  '.cts': 'text/x-typescript',
  '.tsx': 'text/x-typescript',
};

/**
 * The media type of a file or object, from the extension of its last path
 * segment (`/` separated; a dot at the start of a name is not an extension);
 * `application/octet-stream` when unknown.
 */
export function mediaTypeOf(name: string): string {
  const base = name.slice(name.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  const extension = dot > 0 ? base.slice(dot).toLowerCase() : '';
  return OVERRIDES[extension] ?? (lookup(base) || UNKNOWN_MEDIA_TYPE);
}

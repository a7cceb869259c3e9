import { invalidPosition } from '@mcpgw/core';

/**
 * The pagination position of an S3 listing: the last key (relative to the
 * prefix) the previous page processed, object or folder. The next page lists
 * with `StartAfter = prefix + position`.
 *
 * Why not the S3 continuation token: a key stays meaningful across gateway
 * replicas, backend restarts (s3rver's tokens are encrypted with a per-process
 * key) and deleted objects, it lets a page end between a folder and its first
 * object, and it never embeds the prefix. The gateway signs and binds the
 * cursor around it, so the caller cannot forge one for another listing.
 */

const VERSION = 'v1:';
/** S3 keys are at most 1,024 bytes of UTF-8. */
const MAX_KEY_BYTES = 1024;
const utf8 = new TextDecoder('utf-8', { fatal: true });

export function encodePosition(lastKey: string): string {
  return VERSION + Buffer.from(lastKey, 'utf8').toString('base64url');
}

/** Parses a position back; anything this module did not produce throws `invalidPosition()`. */
export function decodePosition(position: string): string {
  if (!position.startsWith(VERSION)) throw invalidPosition();
  const encoded = position.slice(VERSION.length);
  if (!/^[A-Za-z0-9_-]+$/.test(encoded)) throw invalidPosition();
  const bytes = Buffer.from(encoded, 'base64url');
  // Only the spelling encodePosition() produces (no trailing junk bits).
  if (bytes.length === 0 || bytes.length > MAX_KEY_BYTES || bytes.toString('base64url') !== encoded) {
    throw invalidPosition();
  }
  try {
    return utf8.decode(bytes);
  } catch (error) {
    throw invalidPosition(error);
  }
}

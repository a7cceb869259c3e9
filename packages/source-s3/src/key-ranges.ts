import { decodePercentPrefix, normalizePrefixes } from '@mcpgw/core';
import { compareKeys } from './key-order.js';
import { uriPrefix } from './uri.js';

/** S3 keys are at most 1,024 bytes of UTF-8. */
const MAX_KEY_BYTES = 1024;

/**
 * The key prefixes (relative to the source prefix) that a listing narrowed
 * to `uriPrefixes` must cover, normalized in S3's key order: every key whose
 * canonical URI starts with one of the URI prefixes starts with one of these.
 *
 * A URI prefix inside this source decodes to a key prefix; one that stops
 * inside a percent-encoded character is cut back to the last whole character
 * (a canonical URI is each character's encoding in turn, so that is a prefix
 * of the key). A URI prefix that covers the whole source gives `''` (a full
 * scan); one outside the source's URI space gives nothing.
 */
export function keyRanges(sourceId: string, uriPrefixes: readonly string[]): string[] {
  const base = uriPrefix(sourceId);
  const keys: string[] = [];
  for (const prefix of uriPrefixes) {
    if (base.startsWith(prefix)) return [''];
    if (!prefix.startsWith(base)) continue;
    const key = decodePercentPrefix(prefix.slice(base.length));
    if (Buffer.byteLength(key, 'utf8') <= MAX_KEY_BYTES) keys.push(key);
  }
  return normalizePrefixes(keys, compareKeys);
}

/**
 * The longest folder key that is a proper prefix of `range` and so does not
 * start with it: the last ancestor folder of the range's keys outside the
 * range (`''` when there is none).
 */
export function outerFolder(range: string): string {
  return range.length < 2 ? '' : range.slice(0, range.lastIndexOf('/', range.length - 2) + 1);
}

export function maxKey(a: string, b: string): string {
  return compareKeys(a, b) >= 0 ? a : b;
}

import { decodePercentPrefix, normalizePrefixes, normalizeRanges, type ListingRange } from '@mcpgw/core';
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
 * {@link keyRanges} with each range's shape: the key ranges of
 * `uriRanges`, where a key's `/` are its URI's, so depth and exactness carry
 * over. A prefix cut back inside an encoded character still names one level
 * (the cut characters hold no `/`) but no longer one key. A prefix that
 * covers the source more widely than its URI prefix says nothing of the
 * keys' shape: a full scan.
 */
export function keyShapes(sourceId: string, uriRanges: readonly ListingRange[]): ListingRange[] {
  const base = uriPrefix(sourceId);
  const keys: ListingRange[] = [];
  for (const range of uriRanges) {
    if (base.startsWith(range.prefix)) {
      keys.push(range.prefix === base ? { ...range, prefix: '' } : { prefix: '' });
      continue;
    }
    if (!range.prefix.startsWith(base)) continue;
    const encoded = range.prefix.slice(base.length);
    const key = decodePercentPrefix(encoded);
    if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) continue;
    // Cut back, the range admits keys the prefix did not: no longer one key, nor complete.
    if (!decodesWhole(encoded))
      keys.push(range.exact === true ? { prefix: key, depth: 0 } : { prefix: key, ...depthOf(range) });
    else keys.push({ ...range, prefix: key });
  }
  return normalizeRanges(keys, compareKeys);
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

function decodesWhole(encoded: string): boolean {
  try {
    decodeURIComponent(encoded);
    return true;
  } catch {
    return false;
  }
}

function depthOf(range: ListingRange): { depth?: number } {
  return range.depth === undefined ? {} : { depth: range.depth };
}

import { compareKeys } from './key-order.js';
import { isSafeRelativeKey } from './uri.js';

/** One object of a ListObjectsV2 page, key relative to the source prefix. */
export interface ListedObject {
  key: string;
  size?: number;
  lastModified?: Date;
}

export type ListingEntry = { kind: 'folder'; key: string } | { kind: 'object'; key: string; object: ListedObject };

export interface ListingStep {
  entries: ListingEntry[];
  /** The last key processed; absent when the listing is complete. */
  next?: string;
}

/**
 * Turns one flat (no delimiter) ListObjectsV2 page into resources: every
 * object, and every folder (a key prefix ending in "/") exactly once,
 * immediately before its first descendant.
 *
 * The resources form one set ordered by UTF-8 bytes, the order S3 lists keys
 * in: a folder sorts before everything under it, and everything under a
 * folder is contiguous. So "everything up to `after` was handled" is the whole
 * pagination state: for each listed key, its ancestor folders and itself are
 * emitted unless they sort at or before `after`. Unsafe keys and folders
 * ({@link isSafeRelativeKey}) are passed over but still advance the position,
 * so a page of them cannot stall pagination. A key ending in "/" (a folder
 * marker, as consoles create) is the folder itself; the marker of the prefix
 * itself is the root and is not listed.
 *
 * @param objects keys in S3 order, all sorting after `after`
 * @param after the position the page started from (`''` on the first page)
 * @param upstreamTruncated whether S3 has more keys after `objects`
 * @param admit entries it refuses are passed over like unsafe ones (a
 *   listing narrowed by shape): not listed, but the position moves on
 */
export function walkListing(
  objects: readonly ListedObject[],
  after: string,
  limit: number,
  upstreamTruncated: boolean,
  admit: (key: string) => boolean = () => true,
): ListingStep {
  const entries: ListingEntry[] = [];
  let last = after;
  for (const object of objects) {
    const segments = object.key.split('/');
    const chain: ListingEntry[] = [];
    let folder = '';
    for (const segment of segments.slice(0, -1)) {
      folder += `${segment}/`;
      chain.push({ kind: 'folder', key: folder });
    }
    if (!object.key.endsWith('/')) chain.push({ kind: 'object', key: object.key, object });
    for (const entry of chain) {
      if (compareKeys(entry.key, last) <= 0) continue;
      if (entries.length >= limit) return { entries, next: last };
      if (isSafeRelativeKey(entry.key) && admit(entry.key)) entries.push(entry);
      last = entry.key;
    }
  }
  return upstreamTruncated && last !== after ? { entries, next: last } : { entries };
}

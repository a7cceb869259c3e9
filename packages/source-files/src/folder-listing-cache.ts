import type { FolderListing } from './sorted-walk.js';
import { readFolderListing } from './walk-folder.js';

/** How long one folder's sorted listing serves further listing pages. */
export const WALK_REUSE_MS = 2_000;
/** Folder listings kept for reuse at once. */
const REUSED_FOLDERS = 64;
/**
 * Names kept across those listings (each folder holds at most `maxEntries`):
 * the oldest are dropped past this, so a few huge folders cannot pin memory.
 */
const REUSED_NAMES = 200_000;

/** Sorted folder listings shared by the pages of one listing. */
export interface FolderListingCache {
  /**
   * A folder's sorted children, shared by the pages of one listing: a page
   * resuming inside a folder needs all of its names to find its place, and
   * sorting 50,000 names per page would cost more than the page. A listing
   * is reused for `WALK_REUSE_MS` (far below the listing ttl the gateway
   * caches for anyway) and concurrent callers share one. Only folders on
   * the path of recent pages are kept.
   */
  listing(segments: readonly string[]): Promise<FolderListing | undefined>;
  /** Drops every kept listing (a watched change), so the next listing sees the change at once. */
  clear(): void;
}

/** The listing cache of the folder `realRoot`, each folder listed up to `maxEntries` entries. */
export function createFolderListingCache(realRoot: string, maxEntries: number): FolderListingCache {
  const recentFolders = new Map<string, { at: number; listing: Promise<FolderListing | undefined>; names: number }>();
  /** Drops the oldest listings while more than REUSED_FOLDERS or REUSED_NAMES are kept (the newest always stays). */
  function trimRecentFolders(): void {
    let names = 0;
    for (const entry of recentFolders.values()) names += entry.names;
    for (const [key, entry] of recentFolders) {
      if (recentFolders.size <= 1 || (recentFolders.size <= REUSED_FOLDERS && names <= REUSED_NAMES)) return;
      recentFolders.delete(key);
      names -= entry.names;
    }
  }

  function listing(segments: readonly string[]): Promise<FolderListing | undefined> {
    const key = segments.join('/');
    const now = Date.now();
    const recent = recentFolders.get(key);
    if (recent !== undefined && now - recent.at < WALK_REUSE_MS) return recent.listing;
    const found = readFolderListing(realRoot, segments, maxEntries).then((listed) => {
      // The root folder itself gone is a failure of the source, not an empty listing.
      if (listed === undefined && segments.length === 0) {
        throw Object.assign(new Error('the root folder is gone'), { code: 'ENOENT' });
      }
      return listed;
    });
    const entry = { at: now, listing: found, names: 0 };
    recentFolders.delete(key);
    recentFolders.set(key, entry);
    trimRecentFolders();
    found.then(
      (listed) => {
        entry.names = listed?.children.length ?? 0;
        trimRecentFolders();
      },
      () => {
        if (recentFolders.get(key) === entry) recentFolders.delete(key);
      },
    );
    return found;
  }

  return { listing, clear: () => recentFolders.clear() };
}

import { listOpenedFolder, openBeneathRoot, openInFolder, type OpenedEntry } from './open-beneath-root.js';
import { compareNames, isServableName } from './path-segment.js';
import type { FolderListing } from './sorted-walk.js';

/** One listed entry: a folder or a file, by its names below the root. */
export interface WalkEntry {
  segments: string[];
  kind: 'file' | 'directory';
}

/**
 * The sorted servable children of the folder at `segments` below the root,
 * opened beneath it, and whether the folder held more than `maxEntries`
 * entries (then only the first `maxEntries` the OS returned are kept, so a
 * listing can say some were left out). `undefined` when no folder is there.
 */
export async function readFolderListing(
  realRoot: string,
  segments: readonly string[],
  maxEntries: number,
): Promise<FolderListing | undefined> {
  const folder = await openBeneathRoot(realRoot, segments);
  if (folder === undefined) return undefined;
  try {
    if (!folder.stats.isDirectory()) return undefined;
    return await readChildrenBounded(realRoot, segments, folder, maxEntries);
  } finally {
    await folder.handle.close();
  }
}

/**
 * The servable direct children of `folder` (opened beneath the root as
 * `segments`), sorted by name. A folder with more than `maxEntries` entries
 * is cut at the first `maxEntries` the OS returns (then sorted), keeping
 * memory bounded.
 */
export async function readChildren(
  realRoot: string,
  segments: readonly string[],
  folder: OpenedEntry,
  maxEntries: number,
): Promise<WalkEntry[]> {
  return (await readChildrenBounded(realRoot, segments, folder, maxEntries)).children;
}

async function readChildrenBounded(
  realRoot: string,
  segments: readonly string[],
  folder: OpenedEntry,
  maxEntries: number,
): Promise<FolderListing> {
  // One more than the bound tells a full folder from a cut one.
  const dirents = await listOpenedFolder(folder, maxEntries + 1);
  const children: WalkEntry[] = [];
  for (const dirent of dirents.slice(0, maxEntries)) {
    if (!isServableName(dirent.name)) continue;
    const childSegments = [...segments, dirent.name];
    if (dirent.isDirectory()) children.push({ segments: childSegments, kind: 'directory' });
    else if (dirent.isFile()) children.push({ segments: childSegments, kind: 'file' });
    else {
      // A symlink, or a file system that does not report types: decide by
      // the same rules a read applies (symlinked folders open as nothing).
      const opened = await openInFolder(realRoot, folder, dirent.name);
      if (opened === undefined) continue;
      await opened.handle.close();
      children.push({ segments: childSegments, kind: opened.stats.isDirectory() ? 'directory' : 'file' });
    }
  }
  children.sort((a, b) => compareNames(a.segments.at(-1) ?? '', b.segments.at(-1) ?? ''));
  return { children, truncated: dirents.length > maxEntries };
}

/** A whole-tree walk, for change detection: every entry in walk order, up to a bound. */
export interface Walk {
  /** Depth-first pre-order, siblings by `compareNames`; the root folder first. */
  entries: WalkEntry[];
  /** Whether the bound cut the walk short. */
  truncated: boolean;
}

/**
 * Walks the whole tree beneath the root, at most `maxEntries` entries in all
 * (the root counts), each folder opened beneath the root and listed through
 * its handle. The folder watcher fingerprints this walk; listings page through
 * the tree with the resumable sorted walk instead. A folder that cannot be
 * read is skipped (the root's failure is thrown).
 */
export async function walkFolder(realRoot: string, maxEntries: number): Promise<Walk> {
  const entries: WalkEntry[] = [];
  // Explicit stack (pushed in reverse order) rather than recursion: depth is unbounded.
  const stack: WalkEntry[] = [{ segments: [], kind: 'directory' }];
  while (stack.length > 0) {
    const entry = stack.pop() as WalkEntry;
    if (entries.length >= maxEntries) return { entries, truncated: true };
    entries.push(entry);
    if (entry.kind === 'file') continue;
    let listing: FolderListing | undefined;
    try {
      listing = await readFolderListing(realRoot, entry.segments, maxEntries);
    } catch (error) {
      if (entry.segments.length === 0) throw error;
      continue;
    }
    const children = listing?.children ?? [];
    for (let i = children.length - 1; i >= 0; i -= 1) stack.push(children[i] as WalkEntry);
  }
  return { entries, truncated: false };
}

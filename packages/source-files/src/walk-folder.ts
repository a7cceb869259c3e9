import { listOpenedFolder, openBeneathRoot, openInFolder, type OpenedEntry } from './open-beneath-root.js';
import { compareNames, isServableName } from './path-segment.js';

/** One listed entry: a folder or a file, by its names below the root. */
export interface WalkEntry {
  segments: string[];
  kind: 'file' | 'directory';
}

export interface Walk {
  /** Depth-first pre-order, siblings by `compareNames`; the root folder first. */
  entries: WalkEntry[];
  /** Whether `maxEntries` cut the walk short. */
  truncated: boolean;
  /** Relative paths of folders that could not be read (skipped). */
  unreadable: string[];
}

/**
 * Lists the servable entries of the folder at `realRoot`, at most
 * `maxEntries` of them (the root counts), so a huge tree costs bounded time
 * and memory. The order is a sorted depth-first walk: each folder right
 * before its contents, siblings by UTF-16 code units (`comparePaths` gives
 * the same order for any two paths, which is what pagination relies on).
 * Symlinks are listed only as files whose target is a servable file inside
 * the root (see `openBeneathRoot`); symlinked folders are not followed. Each
 * folder is opened beneath the root and listed through its handle, so a
 * folder swapped for a symlink meanwhile lists nothing from outside.
 */
export async function walkFolder(realRoot: string, maxEntries: number): Promise<Walk> {
  const entries: WalkEntry[] = [];
  const unreadable: string[] = [];
  // Explicit stack (pushed in reverse order) rather than recursion: depth is unbounded.
  const stack: WalkEntry[] = [{ segments: [], kind: 'directory' }];
  let truncated = false;
  while (stack.length > 0) {
    const entry = stack.pop();
    if (entry === undefined) break;
    if (entries.length >= maxEntries) {
      truncated = true;
      break;
    }
    entries.push(entry);
    if (entry.kind === 'file') continue;
    let children: WalkEntry[];
    try {
      children = await readChildrenAt(realRoot, entry.segments, maxEntries);
    } catch (error) {
      if (entry.segments.length === 0) throw error;
      unreadable.push(entry.segments.join('/'));
      continue;
    }
    for (let i = children.length - 1; i >= 0; i -= 1) stack.push(children[i] as WalkEntry);
  }
  return { entries, truncated, unreadable };
}

/** `readChildren` of the folder at `segments`, opened beneath the root; ENOENT or ENOTDIR if it is none. */
async function readChildrenAt(realRoot: string, segments: readonly string[], maxEntries: number): Promise<WalkEntry[]> {
  const folder = await openBeneathRoot(realRoot, segments);
  if (folder === undefined) throw Object.assign(new Error('no folder there beneath the root'), { code: 'ENOENT' });
  try {
    if (!folder.stats.isDirectory()) throw Object.assign(new Error('not a folder'), { code: 'ENOTDIR' });
    return await readChildren(realRoot, segments, folder, maxEntries);
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
  const children: WalkEntry[] = [];
  for (const dirent of await listOpenedFolder(folder, maxEntries)) {
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
  return children.sort((a, b) => compareNames(a.segments.at(-1) ?? '', b.segments.at(-1) ?? ''));
}

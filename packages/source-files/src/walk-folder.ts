import { opendir } from 'node:fs/promises';
import { join } from 'node:path';
import { compareNames, isServableName } from './path-segment.js';
import { resolveInside } from './safe-path.js';

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
 * the root (see `resolveInside`); symlinked folders are not followed.
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
      children = await readChildren(realRoot, entry.segments, maxEntries);
    } catch (error) {
      if (entry.segments.length === 0) throw error;
      unreadable.push(entry.segments.join('/'));
      continue;
    }
    for (let i = children.length - 1; i >= 0; i -= 1) stack.push(children[i] as WalkEntry);
  }
  return { entries, truncated, unreadable };
}

/**
 * The servable direct children of a folder, sorted by name. A folder with more
 * than `maxEntries` entries is cut at the first `maxEntries` the OS returns
 * (then sorted), keeping memory bounded.
 */
export async function readChildren(
  realRoot: string,
  segments: readonly string[],
  maxEntries: number,
): Promise<WalkEntry[]> {
  const dir = await opendir(join(realRoot, ...segments));
  const children: WalkEntry[] = [];
  let seen = 0;
  try {
    for await (const dirent of dir) {
      seen += 1;
      if (seen > maxEntries) break;
      if (!isServableName(dirent.name)) continue;
      const childSegments = [...segments, dirent.name];
      if (dirent.isDirectory()) children.push({ segments: childSegments, kind: 'directory' });
      else if (dirent.isFile()) children.push({ segments: childSegments, kind: 'file' });
      else {
        // A symlink, or a file system that does not report types: decide by
        // the same rules a read applies (symlinked folders resolve to nothing).
        const resolved = await resolveInside(realRoot, childSegments);
        if (resolved?.stats.isFile() === true) children.push({ segments: childSegments, kind: 'file' });
        else if (resolved?.stats.isDirectory() === true) children.push({ segments: childSegments, kind: 'directory' });
      }
    }
  } finally {
    // Breaking out of `for await` closes the handle already; closing again throws.
    await dir.close().catch(() => undefined);
  }
  return children.sort((a, b) => compareNames(a.segments.at(-1) ?? '', b.segments.at(-1) ?? ''));
}

import { compareNames, comparePaths } from './path-segment.js';
import type { WalkEntry } from './walk-folder.js';

/** The sorted servable children of one folder, and whether `maxEntries` cut them. */
export interface FolderListing {
  children: WalkEntry[];
  truncated: boolean;
}

/**
 * Reads a folder's children: `undefined` when no folder is there (missing,
 * or not a folder). Throws on I/O failures.
 */
export type ReadFolder = (segments: readonly string[]) => Promise<FolderListing | undefined>;

/**
 * A contiguous part of the walk: the folder `folder` and everything below it
 * when `namePrefix` is `''`; otherwise the children of `folder` whose name
 * starts with `namePrefix`, each with everything below it (not the folder
 * itself). In the walk's order (`comparePaths`) a block is an interval that
 * starts at {@link blockStart}.
 */
export interface WalkBlock {
  folder: string[];
  namePrefix: string;
}

export interface WalkPage {
  entries: WalkEntry[];
  /** Whether entries may follow the last one (so the listing has a next page). */
  more: boolean;
  /** Whether a folder this page read had more entries than `maxEntries` (some were left out). */
  truncated: boolean;
  /** Relative paths of folders that could not be read (skipped). */
  unreadable: string[];
}

/** The whole source: the root folder and everything below it. */
export const WHOLE_TREE: readonly WalkBlock[] = [{ folder: [], namePrefix: '' }];

/** The least path of a block in walk order. */
export function blockStart(block: WalkBlock): string[] {
  return block.namePrefix === '' ? block.folder : [...block.folder, block.namePrefix];
}

function startsWithPath(path: readonly string[], folder: readonly string[]): boolean {
  return path.length >= folder.length && folder.every((name, i) => path[i] === name);
}

/** Whether `path` lies in `block`. */
export function inBlock(block: WalkBlock, path: readonly string[]): boolean {
  if (!startsWithPath(path, block.folder)) return false;
  if (block.namePrefix === '') return true;
  return path.length > block.folder.length && path[block.folder.length]!.startsWith(block.namePrefix);
}

/** Whether every path of `inner` lies in `outer`. */
function containsBlock(outer: WalkBlock, inner: WalkBlock): boolean {
  if (inner.namePrefix === '') return inBlock(outer, inner.folder);
  if (inner.folder.length === outer.folder.length && startsWithPath(inner.folder, outer.folder)) {
    return inner.namePrefix.startsWith(outer.namePrefix);
  }
  return inner.folder.length > outer.folder.length && inBlock(outer, inner.folder);
}

/** Blocks in walk order with none inside another, so walking them in turn keeps the walk's order. */
export function normalizeBlocks(blocks: readonly WalkBlock[]): WalkBlock[] {
  const sorted = [...blocks].sort((a, b) => comparePaths(blockStart(a), blockStart(b)));
  const kept: WalkBlock[] = [];
  for (const block of sorted) {
    if (!kept.some((outer) => containsBlock(outer, block))) kept.push(block);
  }
  return kept;
}

interface Level {
  list: WalkEntry[];
  index: number;
}

/**
 * One page of the sorted depth-first walk (each folder right before its
 * contents, siblings by `compareNames`) restricted to `blocks`, resuming
 * after the path `after`. It reads only the folders on the way from `after`
 * back up to its block's folder and those it emits, never the whole tree, so
 * a page costs about the same at any depth into a tree of any size (issue 15).
 */
export async function walkPage(
  read: ReadFolder,
  blocks: readonly WalkBlock[],
  after: readonly string[] | undefined,
  limit: number,
): Promise<WalkPage> {
  const entries: WalkEntry[] = [];
  const unreadable: string[] = [];
  let truncated = false;
  /** A folder's children; `undefined` when no folder is there. */
  const children = async (segments: readonly string[]): Promise<WalkEntry[] | undefined> => {
    let listing: FolderListing | undefined;
    try {
      listing = await read(segments);
    } catch (error) {
      if (segments.length === 0) throw error;
      unreadable.push(segments.join('/'));
      return [];
    }
    if (listing === undefined) return undefined;
    truncated ||= listing.truncated;
    return listing.children;
  };

  let last = after;
  for (const block of blocks) {
    // A block wholly before `after` was listed by earlier pages.
    if (last !== undefined && !inBlock(block, last) && comparePaths(last, blockStart(block)) > 0) continue;
    if (entries.length >= limit) return { entries, more: true, truncated, unreadable };
    const stack = await resume(block, last === undefined || !inBlock(block, last) ? undefined : last, children);
    while (stack.length > 0) {
      const top = stack.at(-1)!;
      const entry = top.list[top.index];
      if (entry === undefined) {
        stack.pop();
        continue;
      }
      if (entries.length >= limit) return { entries, more: true, truncated, unreadable };
      top.index += 1;
      entries.push(entry);
      last = entry.segments;
      if (entry.kind === 'directory') stack.push({ list: (await children(entry.segments)) ?? [], index: 0 });
    }
  }
  return { entries, more: false, truncated, unreadable };
}

/**
 * The walk's pending lists for continuing in `block` after `after` (from
 * the block's start when undefined): for each folder from the block's down
 * to `after`'s parent, the siblings that sort after the path taken, and the
 * children of `after` itself when it is a folder.
 */
async function resume(
  block: WalkBlock,
  after: readonly string[] | undefined,
  children: (segments: readonly string[]) => Promise<WalkEntry[] | undefined>,
): Promise<Level[]> {
  const { folder, namePrefix } = block;
  const inPrefix = (entry: WalkEntry) => entry.segments[folder.length]!.startsWith(namePrefix);
  const list = async (segments: readonly string[]) => (await children(segments)) ?? [];
  if (after === undefined) {
    if (namePrefix !== '') return [{ list: (await list(folder)).filter(inPrefix), index: 0 }];
    // The block's folder comes first, if there is one.
    if (folder.length > 0 && (await children(folder)) === undefined) return [];
    return [{ list: [{ segments: folder, kind: 'directory' }], index: 0 }];
  }
  if (after.length === folder.length) return [{ list: await list(folder), index: 0 }];
  const stack: Level[] = [];
  let afterIsFolder = false;
  for (let depth = folder.length; depth < after.length; depth += 1) {
    const name = after[depth]!;
    let siblings = await list(after.slice(0, depth));
    if (depth === folder.length && namePrefix !== '') siblings = siblings.filter(inPrefix);
    if (depth === after.length - 1) {
      afterIsFolder = siblings.some((e) => e.kind === 'directory' && e.segments[depth] === name);
    }
    stack.push({ list: siblings.filter((e) => compareNames(e.segments[depth]!, name) > 0), index: 0 });
  }
  if (afterIsFolder) stack.push({ list: await list(after), index: 0 });
  return stack;
}

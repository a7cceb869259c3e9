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
  /**
   * The shape of what a caller's grants reach in the block (see
   * `ListingRange`): at most `depth` `/` in an entry's URI after the block's
   * prefix, or (`exact`) the entry the prefix names and nothing else. Absent:
   * everything in the block.
   */
  depth?: number;
  exact?: boolean;
}

/** `/` after the block's prefix in the entry's URI: one per level below the block's names, one for a folder's own. */
function slashesAfter(block: WalkBlock, entry: WalkEntry): number {
  const below = entry.segments.length - block.folder.length - 1;
  return below < 0 ? 0 : below + (entry.kind === 'directory' ? 1 : 0);
}

/** Whether the block's shape admits `entry` (which lies in the block). */
function admits(block: WalkBlock, entry: WalkEntry): boolean {
  if (block.exact === true) {
    if (block.namePrefix === '') return entry.segments.length === block.folder.length;
    return (
      entry.kind === 'file' &&
      entry.segments.length === block.folder.length + 1 &&
      entry.segments.at(-1) === block.namePrefix
    );
  }
  return block.depth === undefined || slashesAfter(block, entry) <= block.depth;
}

/** Whether anything below the folder at `segments` can be admitted: the walk reads it only then. */
function descends(block: WalkBlock, segments: readonly string[]): boolean {
  if (block.exact === true) return false;
  return block.depth === undefined || segments.length - block.folder.length <= block.depth;
}

/** Entries one page examines at most when passing over entries, so one call cannot walk a whole tree. */
export const MAX_EXAMINED_PER_PAGE = 10_000;

export interface WalkPage {
  entries: WalkEntry[];
  /** The last entry examined (listed or passed over): where the next page resumes. */
  last?: readonly string[] | undefined;
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

/**
 * Blocks in walk order with none inside another, so walking them in turn
 * keeps the walk's order. A shaped block that holds another becomes its whole
 * block (admitting both, and more).
 */
export function normalizeBlocks(blocks: readonly WalkBlock[]): WalkBlock[] {
  const sorted = [...blocks].sort((a, b) => comparePaths(blockStart(a), blockStart(b)));
  const kept: WalkBlock[] = [];
  for (const block of sorted) {
    const outer = kept.findIndex((candidate) => containsBlock(candidate, block));
    if (outer === -1) kept.push(block);
    else if (!sameShape(kept[outer]!, block) && !isWhole(kept[outer]!)) {
      kept[outer] = { folder: kept[outer]!.folder, namePrefix: kept[outer]!.namePrefix };
    }
  }
  return kept;
}

function isWhole(block: WalkBlock): boolean {
  return block.depth === undefined && block.exact !== true;
}

function sameShape(a: WalkBlock, b: WalkBlock): boolean {
  return (
    a.depth === b.depth &&
    a.exact === b.exact &&
    a.namePrefix === b.namePrefix &&
    comparePaths(a.folder, b.folder) === 0
  );
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
 * a page costs about the same at any depth into a tree of any size.
 */
export async function walkPage(
  read: ReadFolder,
  blocks: readonly WalkBlock[],
  after: readonly string[] | undefined,
  limit: number,
  keep: (entry: WalkEntry) => boolean = () => true,
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
  let examined = 0;
  const stop = () => ({ entries, last, more: true, truncated, unreadable });
  for (const block of blocks) {
    // A block wholly before `after` was listed by earlier pages.
    if (last !== undefined && !inBlock(block, last) && comparePaths(last, blockStart(block)) > 0) continue;
    if (entries.length >= limit) return stop();
    const from = last === undefined || !inBlock(block, last) ? undefined : last;
    const stack = await resume(block, from, children, (segments) => descends(block, segments));
    while (stack.length > 0) {
      const top = stack.at(-1)!;
      const entry = top.list[top.index];
      if (entry === undefined) {
        stack.pop();
        continue;
      }
      if (entries.length >= limit || examined >= MAX_EXAMINED_PER_PAGE) return stop();
      top.index += 1;
      examined += 1;
      // Passed over (the block's shape or the caller's view): not listed, but the walk moves on.
      if (admits(block, entry) && keep(entry)) entries.push(entry);
      last = entry.segments;
      if (entry.kind === 'directory' && descends(block, entry.segments)) {
        stack.push({ list: (await children(entry.segments)) ?? [], index: 0 });
      }
    }
  }
  return { entries, last, more: false, truncated, unreadable };
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
  descendsInto: (segments: readonly string[]) => boolean,
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
  if (after.length === folder.length) return descendsInto(folder) ? [{ list: await list(folder), index: 0 }] : [];
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
  if (afterIsFolder && descendsInto(after)) stack.push({ list: await list(after), index: 0 });
  return stack;
}

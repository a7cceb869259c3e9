import { decodePercentPrefix, type ListingRange } from '@mcpgw/core';
import { fileUriPrefix } from './file-uri.js';
import { isServableName } from './path-segment.js';
import { normalizeBlocks, WHOLE_TREE, type WalkBlock } from './sorted-walk.js';

/**
 * The parts of the tree a listing narrowed to URI prefixes walks:
 * a prefix's whole segments name a folder and its last, partial segment the
 * start of the names below it (`file:///docs/reports/` is the folder
 * `reports` with everything in it, `file:///docs/reports/q` its entries
 * whose name starts with `q`), each with the shape of what its range
 * reaches (one level, one entry). A prefix covering the source walks it all;
 * one outside it, or whose folder names are not canonical, walks nothing,
 * since no URI of this source starts with it.
 */
export function walkBlocks(sourceId: string, ranges: readonly (string | ListingRange)[]): WalkBlock[] {
  const base = fileUriPrefix(sourceId);
  const blocks: WalkBlock[] = [];
  for (const item of ranges) {
    const range = typeof item === 'string' ? { prefix: item } : item;
    const prefix = range.prefix;
    if (prefix === base && range.exact !== true) {
      // The root's URI: its entries, shaped (the root itself is never listed).
      blocks.push({ folder: [], namePrefix: '', ...shapeOf(range, true) });
      continue;
    }
    if (base.startsWith(prefix)) return [...WHOLE_TREE];
    if (!prefix.startsWith(base)) continue;
    const encoded = prefix.slice(base.length).split('/');
    const tail = encoded.pop() ?? '';
    const folder: string[] = [];
    for (const segment of encoded) {
      const name = decodeExactly(segment);
      if (name === undefined || !isServableName(name) || encodeURIComponent(name) !== segment) break;
      folder.push(name);
    }
    if (folder.length !== encoded.length) continue;
    const namePrefix = decodePercentPrefix(tail);
    blocks.push({ folder, namePrefix, ...shapeOf(range, decodeExactly(tail) === namePrefix) });
  }
  return normalizeBlocks(blocks);
}

/**
 * A range's shape as a block's: unchanged when its last segment decoded
 * whole; cut back inside an encoded character, it names no one entry (but
 * still one level, the cut characters holding no `/`).
 */
function shapeOf(range: ListingRange, whole: boolean): Pick<WalkBlock, 'depth' | 'exact'> {
  if (range.exact === true) return whole ? { exact: true } : { depth: 0 };
  return range.depth === undefined ? {} : { depth: range.depth };
}

function decodeExactly(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

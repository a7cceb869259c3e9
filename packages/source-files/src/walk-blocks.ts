import { decodePercentPrefix } from '@mcpgw/core';
import { fileUriPrefix } from './file-uri.js';
import { isServableName } from './path-segment.js';
import { normalizeBlocks, WHOLE_TREE, type WalkBlock } from './sorted-walk.js';

/**
 * The parts of the tree a listing narrowed to URI prefixes (issue 15) walks:
 * a prefix's whole segments name a folder and its last, partial segment the
 * start of the names below it (`file:///docs/reports/` is the folder
 * `reports` with everything in it, `file:///docs/reports/q` its entries
 * whose name starts with `q`). A prefix covering the source walks it all;
 * one outside it, or whose folder names are not canonical, walks nothing,
 * since no URI of this source starts with it.
 */
export function walkBlocks(sourceId: string, prefixes: readonly string[]): WalkBlock[] {
  const base = fileUriPrefix(sourceId);
  const blocks: WalkBlock[] = [];
  for (const prefix of prefixes) {
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
    blocks.push({ folder, namePrefix: decodePercentPrefix(tail) });
  }
  return normalizeBlocks(blocks);
}

function decodeExactly(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

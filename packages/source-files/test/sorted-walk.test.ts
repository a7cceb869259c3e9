import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { comparePaths } from '../src/path-segment.js';
import { inBlock, normalizeBlocks, walkPage, WHOLE_TREE, type ReadFolder, type WalkBlock } from '../src/sorted-walk.js';
import type { WalkEntry } from '../src/walk-folder.js';

/** An in-memory tree: a folder maps names to subtrees, a file is `null`. */
type Tree = { [name: string]: Tree | null };

function reader(tree: Tree): ReadFolder {
  return async (segments) => {
    let node: Tree | null | undefined = tree;
    for (const name of segments) node = node?.[name];
    if (node === null || node === undefined) return undefined;
    const children: WalkEntry[] = Object.entries(node).map(([name, child]) => ({
      segments: [...segments, name],
      kind: child === null ? 'file' : 'directory',
    }));
    return { children: children.sort((a, b) => comparePaths(a.segments, b.segments)), truncated: false };
  };
}

/** The oracle: every path of the tree in walk order, computed by plain recursion and sorting. */
function allPaths(tree: Tree, at: string[] = []): string[][] {
  const paths: string[][] = [at];
  for (const name of Object.keys(tree)) {
    const child = tree[name];
    if (child === null || child === undefined) paths.push([...at, name]);
    else paths.push(...allPaths(child, [...at, name]));
  }
  return paths.sort(comparePaths);
}

function isFile(tree: Tree, path: readonly string[]): boolean {
  let node: Tree | null | undefined = tree;
  for (const name of path) node = node?.[name];
  return node === null;
}

async function pageThrough(read: ReadFolder, blocks: readonly WalkBlock[], limit: number): Promise<string[][]> {
  const out: string[][] = [];
  let after: string[] | undefined;
  for (let guard = 0; guard < 1_000; guard += 1) {
    const page = await walkPage(read, blocks, after, limit);
    out.push(...page.entries.map((e) => e.segments));
    if (!page.more) return out;
    after = page.entries.at(-1)?.segments ?? after;
  }
  throw new Error('walk did not end');
}

const name = fc.constantFrom('a', 'b', 'a-b', 'ab', 'B', 'c');
const tree: fc.Arbitrary<Tree> = fc.letrec<{ tree: Tree }>((tie) => ({
  tree: fc.dictionary(name, fc.oneof({ depthSize: 'small' }, fc.constant(null), tie('tree')), { maxKeys: 4 }),
})).tree;
const block: fc.Arbitrary<WalkBlock> = fc.record({
  folder: fc.array(name, { maxLength: 2 }),
  namePrefix: fc.constantFrom('', 'a', 'b', 'ab'),
});

describe('sorted walk', () => {
  it('pages through the whole tree in walk order at any page size (property)', async () => {
    await fc.assert(
      fc.asyncProperty(tree, fc.integer({ min: 1, max: 5 }), async (t, limit) => {
        expect(await pageThrough(reader(t), WHOLE_TREE, limit)).toEqual(allPaths(t));
      }),
    );
  });

  it('walks exactly the paths of the blocks, in the same order (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        tree,
        fc.array(block, { maxLength: 3 }),
        fc.integer({ min: 1, max: 4 }),
        async (t, raw, limit) => {
          const blocks = normalizeBlocks(raw);
          // A block's own folder counts only when it is a folder (its URI ends with `/`).
          const files = new Set(
            allPaths(t)
              .filter((path) => isFile(t, path))
              .map((path) => path.join('/')),
          );
          const expected = allPaths(t).filter((path) =>
            blocks.some((b) => inBlock(b, path) && !(path.length === b.folder.length && files.has(path.join('/')))),
          );
          expect(await pageThrough(reader(t), blocks, limit)).toEqual(expected);
        },
      ),
    );
  });

  it('keeps blocks in walk order, dropping those inside another', () => {
    expect(
      normalizeBlocks([
        { folder: ['a', 'x'], namePrefix: '' },
        { folder: ['a-b'], namePrefix: '' },
        { folder: [], namePrefix: 'a' },
        { folder: ['b'], namePrefix: 'q' },
      ]),
    ).toEqual([
      { folder: [], namePrefix: 'a' },
      { folder: ['b'], namePrefix: 'q' },
    ]);
  });
});

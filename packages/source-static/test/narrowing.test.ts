import { rangeAdmits, type ListingRange, type PageRequest, type Source } from '@mcpgw/core';
import { describe, expect, it } from 'vitest';
import { createSource } from './helpers.js';

// A listing narrowed to the caller's ranges lists what the ranges
// admit of the full listing, in its order, from one call per page.

const uris = [
  'test://docs/a.md',
  'test://docs/b.md',
  'test://other/x',
  'test://docs/sub/c.md',
  'test://docsish',
  'test://other/y',
  'test://docs/d.md',
  'test://z',
];

async function listAll(source: Source, request: Omit<PageRequest, 'position'>) {
  const pages: string[][] = [];
  let position: string | undefined;
  for (let guard = 0; guard < 20; guard += 1) {
    const page = await source.listResources(position === undefined ? request : { ...request, position });
    pages.push(page.items.map((item) => item.uri));
    position = page.nextPosition;
    if (position === undefined) return pages;
  }
  throw new Error('listing did not end');
}

describe('narrowed listing', () => {
  const create = () => createSource({ resources: uris.map((uri) => ({ uri, name: uri, text: uri })) });

  it.each<[string, ListingRange[]]>([
    ['a subtree', [{ prefix: 'test://docs/' }]],
    ['one level', [{ prefix: 'test://docs/', depth: 0 }]],
    ['one URI and a prefix inside a name', [{ prefix: 'test://docs' }, { prefix: 'test://z', exact: true }]],
    ['nothing', [{ prefix: 'test://none/' }]],
  ])('%s: what the ranges admit, in declaration order, in full pages', async (_name, ranges) => {
    const source = await create();
    const expected = uris.filter((uri) => ranges.some((range) => rangeAdmits(range, uri)));
    const pages = await listAll(source, { limit: 2, prefixes: ranges.map((r) => r.prefix), ranges });
    expect(pages.flat()).toEqual(expected);
    // Every page but the last is full: no empty page with a cursor.
    for (const page of pages.slice(0, -1)) expect(page).toHaveLength(2);
    expect(pages.at(-1)!.length).toBeGreaterThan(expected.length === 0 ? -1 : 0);
  });

  it('narrows by prefix alone when no shape is given, and passes over what the caller may not see', async () => {
    const source = await create();
    expect((await listAll(source, { limit: 10, prefixes: ['test://other/'] })).flat()).toEqual([
      'test://other/x',
      'test://other/y',
    ]);
    const visible = (uri: string) => !uri.endsWith('b.md');
    const pages = await listAll(source, { limit: 10, prefixes: ['test://docs/'], visible, view: 'v' });
    expect(pages).toEqual([['test://docs/a.md', 'test://docs/sub/c.md', 'test://docs/d.md']]);
  });
});

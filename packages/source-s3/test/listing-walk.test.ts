import { describe, expect, it } from 'vitest';
import { walkListing, type ListedObject } from '../src/listing-walk.js';
import { compareKeys } from '../src/key-order.js';

const objects = (...keys: string[]): ListedObject[] => keys.map((key) => ({ key }));

/** Pages through `keys` the way the source does: each page re-lists after the position. */
function pageAll(keys: string[], limit: number): string[][] {
  const sorted = [...keys].sort(compareKeys);
  const pages: string[][] = [];
  let after = '';
  for (let guard = 0; guard < 10_000; guard++) {
    const rest = sorted.filter((key) => compareKeys(key, after) > 0);
    const upstream = rest.slice(0, limit);
    const step = walkListing(objects(...upstream), after, limit, rest.length > limit);
    pages.push(step.entries.map((entry) => entry.key));
    if (step.next === undefined) return pages;
    after = step.next;
  }
  throw new Error('pagination did not end');
}

describe('walkListing', () => {
  it('emits each folder once, just before its first descendant', () => {
    const step = walkListing(objects('a.txt', 'b/c/d.txt', 'b/c/e.txt', 'b/f.txt', 'g/'), '', 100, false);
    expect(step.entries.map((entry) => `${entry.kind}:${entry.key}`)).toEqual([
      'object:a.txt',
      'folder:b/',
      'folder:b/c/',
      'object:b/c/d.txt',
      'object:b/c/e.txt',
      'object:b/f.txt',
      'folder:g/',
    ]);
    expect(step.next).toBeUndefined();
  });

  it('pages without gaps or duplicates for every page size, breaking between a folder and its objects', () => {
    const keys = ['a/b/c/1', 'a/b/c/2', 'a/b/3', 'a/4', 'b', 'c/d/', 'c/d/5', 'e/f/g/h/6', 'z'];
    const expected = pageAll(keys, 1000).flat();
    expect(expected).toEqual([
      'a/',
      'a/4', // "4" sorts before "b"
      'a/b/',
      'a/b/3',
      'a/b/c/',
      'a/b/c/1',
      'a/b/c/2',
      'b',
      'c/',
      'c/d/',
      'c/d/5',
      'e/',
      'e/f/',
      'e/f/g/',
      'e/f/g/h/',
      'e/f/g/h/6',
      'z',
    ]);
    for (let limit = 1; limit <= 20; limit++) {
      const pages = pageAll(keys, limit);
      expect(pages.flat(), `limit ${limit}`).toEqual(expected);
      for (const page of pages) expect(page.length).toBeLessThanOrEqual(limit);
    }
  });

  it('passes over unsafe keys but still advances, so a page of them cannot stall', () => {
    const step = walkListing(objects('a/../x', 'a/b\\c', 'a/ok', 'n\u0000'), '', 1, true);
    expect(step.entries.map((entry) => entry.key)).toEqual(['a/']);
    const rest = walkListing(objects('a/../x', 'a/b\\c', 'a/ok', 'n\u0000'), step.next ?? '', 10, false);
    expect(rest.entries.map((entry) => entry.key)).toEqual(['a/ok']);
    const onlyUnsafe = walkListing(objects('..', 'x\u0001'), '', 10, true);
    expect(onlyUnsafe.entries).toEqual([]);
    expect(onlyUnsafe.next).toBe('x\u0001');
  });
});

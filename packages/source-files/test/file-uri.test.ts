import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { comparePaths, isServableName } from '../src/path-segment.js';
import { parseFileUri, toFileUri } from '../src/file-uri.js';

describe('file URIs', () => {
  it('name the source and percent-encode each segment', () => {
    expect(toFileUri('docs', [], true)).toBe('file:///docs/');
    expect(toFileUri('docs', ['a b', 'ü#?%.md'], false)).toBe('file:///docs/a%20b/%C3%BC%23%3F%25.md');
    expect(toFileUri('docs', ['policies'], true)).toBe('file:///docs/policies/');
  });

  it('round-trip every servable path', () => {
    const name = fc.string({ minLength: 1, maxLength: 12, unit: 'grapheme' }).filter(isServableName);
    fc.assert(
      fc.property(fc.array(name, { maxLength: 5 }), fc.boolean(), (segments, directory) => {
        const isDirectory = directory || segments.length === 0;
        const uri = toFileUri('docs', segments, isDirectory);
        expect(URL.canParse(uri)).toBe(true);
        expect(parseFileUri('docs', uri)).toEqual({ segments, directory: isDirectory });
      }),
      { numRuns: 500 },
    );
  });

  it('parse only the canonical spelling', () => {
    expect(parseFileUri('docs', 'file:///docs/a.txt')).toEqual({ segments: ['a.txt'], directory: false });
    expect(parseFileUri('docs', 'file:///docs/%C3%BC.txt')).toEqual({ segments: ['ü.txt'], directory: false });
    expect(parseFileUri('docs', 'file:///docs/%c3%bc.txt')).toBeUndefined();
    expect(parseFileUri('docs', 'file:///docs/%61.txt')).toBeUndefined();
    expect(parseFileUri('docs', 'file:///docs/a b.txt')).toBeUndefined();
  });
});

describe('path order', () => {
  it('puts a folder right before its contents', () => {
    const paths = [['a-b'], ['a', 'x'], ['a'], ['B'], ['a', 'c', 'd'], ['a', 'c'], []];
    expect(paths.sort(comparePaths)).toEqual([[], ['B'], ['a'], ['a', 'c'], ['a', 'c', 'd'], ['a', 'x'], ['a-b']]);
  });
});

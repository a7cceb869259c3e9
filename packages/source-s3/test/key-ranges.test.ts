import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { keyRanges, outerFolder } from '../src/key-ranges.js';
import { keyToUri } from '../src/uri.js';

describe('key ranges of a narrowed listing', () => {
  it('decodes URI prefixes into key prefixes in key order, dropping covered ones', () => {
    expect(keyRanges('lake', ['s3:///lake/reports/finance/', 's3:///lake/a%20b/', 's3:///lake/reports/'])).toEqual([
      'a b/',
      'reports/',
    ]);
  });

  it('cuts a prefix that stops inside an encoded character back to the last whole one', () => {
    expect(keyRanges('lake', ['s3:///lake/caf%C3%A'])).toEqual(['caf']);
    expect(keyRanges('lake', ['s3:///lake/caf%C3'])).toEqual(['caf']);
    expect(keyRanges('lake', ['s3:///lake/caf%C3%A9'])).toEqual(['café']);
  });

  it('scans everything for a prefix covering the source, nothing for one outside it', () => {
    expect(keyRanges('lake', ['s3:///lake/a/', 's3:///la'])).toEqual(['']);
    expect(keyRanges('lake', ['s3:///lake/'])).toEqual(['']);
    expect(keyRanges('lake', ['s3:///lakehouse/a/', 'file:///lake/'])).toEqual([]);
  });

  it('starts a range after its last ancestor folder outside it', () => {
    expect(outerFolder('reports/finance/')).toBe('reports/');
    expect(outerFolder('reports/fin')).toBe('reports/');
    expect(outerFolder('a/')).toBe('');
    expect(outerFolder('/')).toBe('');
    expect(outerFolder('')).toBe('');
  });

  it('keeps every key whose URI starts with a granted prefix (property)', () => {
    const key = fc
      .array(fc.constantFrom('a', 'é', '/', ' ', '😀', 'b%'), { minLength: 1, maxLength: 6 })
      .map((p) => p.join(''));
    fc.assert(
      fc.property(key, fc.nat(40), (k, cut) => {
        const uri = keyToUri('lake', k);
        const prefix = uri.slice(0, 's3:///lake/'.length + cut);
        const ranges = keyRanges('lake', [prefix]);
        expect(ranges.some((range) => k.startsWith(range))).toBe(true);
      }),
    );
  });
});

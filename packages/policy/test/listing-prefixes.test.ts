import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Principal } from '@mcpgw/core';
import { normalizePrefixes, rangeAdmits } from '@mcpgw/core';
import type { Grant } from '../src/index.js';
import { listingPrefixesOf, listingRangeOf, listingRangesOf, literalPrefix, resolveAccess } from '../src/index.js';

const alice: Principal = { issuer: 'https://idp.a', subject: 'alice', scopes: [], groups: ['finance'], expiresAt: 0 };

describe('listing prefixes', () => {
  it('takes each pattern up to its first wildcard', () => {
    expect(literalPrefix('s3:///lake/reports/finance/**')).toBe('s3:///lake/reports/finance/');
    expect(literalPrefix('db+postgres:///wh/sales/*')).toBe('db+postgres:///wh/sales/');
    expect(literalPrefix('file:///docs/a/*.md')).toBe('file:///docs/a/');
    expect(literalPrefix('file:///docs/a/readme.md')).toBe('file:///docs/a/readme.md');
    expect(literalPrefix('**/secret')).toBe('');
  });

  it('dedupes, drops prefixes a shorter one covers, and sorts', () => {
    expect(listingPrefixesOf(['s3:///s/b/**', 's3:///s/a/x/**', 's3:///s/a/**', 's3:///s/b/*.csv'])).toEqual([
      's3:///s/a/',
      's3:///s/b/',
    ]);
    expect(normalizePrefixes(['ab', 'a', 'b', 'ab', 'ba'])).toEqual(['a', 'b']);
  });

  it('falls back to a full scan for the whole source or a pattern without a literal start', () => {
    expect(listingPrefixesOf('all')).toBeUndefined();
    expect(listingPrefixesOf(['s3:///s/a/**', '*'])).toBeUndefined();
    expect(listingPrefixesOf([])).toEqual([]);
  });

  it('gives a scope per source: narrowed, unrestricted, or nothing for a source not granted', () => {
    const grants: Grant[] = [
      {
        name: 'finance',
        match: { groups: ['finance'] },
        allow: [
          { source: 'lake', uris: ['s3:///lake/reports/finance/**', 's3:///lake/reports/finance/q1/*'] },
          { source: 'lake', uris: ['s3:///lake/shared/*.csv'] },
          { source: 'docs' },
          { source: 'empty', uris: [] },
        ],
      },
    ];
    const scope = resolveAccess('acme', alice, grants);
    expect(scope.listingPrefixes?.('lake')).toEqual(['s3:///lake/reports/finance/', 's3:///lake/shared/']);
    expect(scope.listingPrefixes?.('docs')).toBeUndefined();
    expect(scope.listingPrefixes?.('empty')).toEqual([]);
    expect(scope.listingPrefixes?.('other')).toEqual([]);
  });

  it('never leaves out a URI the scope allows (property)', () => {
    // Small alphabet so patterns and URIs overlap often.
    const piece = fc.constantFrom('a', 'b', '/', 'ab', 'a/', 'b/', '*', '**', '%41');
    const pattern = fc.array(piece, { maxLength: 6 }).map((parts) => `s3:///s/${parts.join('')}`);
    const uri = fc
      .array(fc.constantFrom('a', 'b', '/', 'ab', '%41'), { maxLength: 8 })
      .map((p) => `s3:///s/${p.join('')}`);
    fc.assert(
      fc.property(fc.array(pattern, { maxLength: 4 }), fc.array(uri, { maxLength: 20 }), (patterns, uris) => {
        const scope = resolveAccess('acme', alice, [
          { name: 'g', match: {}, allow: [{ source: 's', uris: patterns }] },
        ]);
        const prefixes = scope.listingPrefixes?.('s');
        if (prefixes === undefined) return;
        // Normalized: sorted, and no prefix starts with another.
        expect(prefixes).toEqual(normalizePrefixes(prefixes));
        for (const candidate of uris) {
          if (scope.allows('s', candidate)) expect(prefixes.some((p) => candidate.startsWith(p))).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('gives each prefix the shape of what follows it: a subtree, levels, or one URI', () => {
    expect(listingRangeOf('s3:///s/reports/**')).toEqual({ prefix: 's3:///s/reports/', complete: true });
    expect(listingRangeOf('s3:///s/reports/*')).toEqual({ prefix: 's3:///s/reports/', depth: 0, complete: true });
    expect(listingRangeOf('s3:///s/reports/*.csv')).toEqual({ prefix: 's3:///s/reports/', depth: 0 });
    expect(listingRangeOf('s3:///s/r/*/summary.md')).toEqual({ prefix: 's3:///s/r/', depth: 1 });
    expect(listingRangeOf('s3:///s/r/*/x/**')).toEqual({ prefix: 's3:///s/r/' });
    expect(listingRangeOf('s3:///s/r/a.md')).toEqual({ prefix: 's3:///s/r/a.md', exact: true, complete: true });
  });

  it('merges a covered range into the one covering it, widening what it admits', () => {
    expect(listingRangesOf(['s3:///s/a/*', 's3:///s/a/b/*'])).toEqual([{ prefix: 's3:///s/a/', depth: 1 }]);
    expect(listingRangesOf(['s3:///s/a/x', 's3:///s/a/x'])).toEqual([
      { prefix: 's3:///s/a/x', exact: true, complete: true },
    ]);
    expect(listingRangesOf(['s3:///s/a/**', 's3:///s/a/b/*.csv'])).toEqual([{ prefix: 's3:///s/a/', complete: true }]);
    expect(listingRangesOf(['s3:///s/a/*', 's3:///s/a/b/**'])).toEqual([{ prefix: 's3:///s/a/' }]);
    expect(listingRangesOf(['s3:///s/p*', 's3:///s/p'])).toEqual([{ prefix: 's3:///s/p', depth: 0, complete: true }]);
  });

  it('admits every URI the scope allows, and only granted ones where complete (property)', () => {
    const piece = fc.constantFrom('a', 'b', '/', 'ab', 'a/', 'b/', '*', '**', '.x');
    const pattern = fc.array(piece, { maxLength: 6 }).map((parts) => `s3:///s/${parts.join('')}`);
    const uri = fc
      .array(fc.constantFrom('a', 'b', '/', 'ab', '.x'), { maxLength: 8 })
      .map((p) => `s3:///s/${p.join('')}`);
    fc.assert(
      fc.property(fc.array(pattern, { maxLength: 4 }), fc.array(uri, { maxLength: 20 }), (patterns, uris) => {
        const scope = resolveAccess('acme', alice, [
          { name: 'g', match: {}, allow: [{ source: 's', uris: patterns }] },
        ]);
        const ranges = scope.listingRanges?.('s');
        expect(ranges?.map((r) => r.prefix)).toEqual(scope.listingPrefixes?.('s'));
        if (ranges === undefined) return;
        for (const candidate of uris) {
          const admitting = ranges.filter((r) => rangeAdmits(r, candidate));
          if (scope.allows('s', candidate)) expect(admitting).toHaveLength(1);
          if (admitting.some((r) => r.complete === true)) expect(scope.allows('s', candidate)).toBe(true);
        }
      }),
      { numRuns: 1000 },
    );
  });
});

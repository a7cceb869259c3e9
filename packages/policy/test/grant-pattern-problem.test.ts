import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { UriSpace } from '@mcpgw/core';
import { compileUriPattern } from '../src/uri-pattern.js';
import { grantPatternProblem } from '../src/grant-pattern-problem.js';

const files: UriSpace = { prefixes: ['file:///docs/'], emptySegments: false };
const postgres: UriSpace = { prefixes: ['db+postgres:///crm/'], emptySegments: false };
const s3: UriSpace = { prefixes: ['s3:///reports/'], emptySegments: true };
const fixtures: UriSpace = { prefixes: ['test://static-text', 'test://template/'], emptySegments: true };

describe('grantPatternProblem', () => {
  it('accepts every pattern that can match a URI of the source', () => {
    for (const pattern of [
      'file:///docs/**',
      'file:///docs/',
      'file:///docs/eng/*.md',
      'file:///*/eng/**',
      'file:///d*/**',
      '**',
      '**/eng/**',
      '**//docs/eng/*', // its `//` can be the one after `file:`
    ]) {
      expect(grantPatternProblem(pattern, files, 'docs'), pattern).toBeUndefined();
    }
    expect(grantPatternProblem('db+postgres:///crm/public/*', postgres, 'crm')).toBeUndefined();
    expect(grantPatternProblem('db+postgres:///crm/public/t/rows?**', postgres, 'crm')).toBeUndefined();
    expect(grantPatternProblem('s3:///reports/a//b', s3, 'reports')).toBeUndefined();
    expect(grantPatternProblem('test://static-text', fixtures, 'fixtures')).toBeUndefined();
    expect(grantPatternProblem('test://template/*/data', fixtures, 'fixtures')).toBeUndefined();
  });

  it('names a wrong scheme', () => {
    expect(grantPatternProblem('db+postgres:///docs/**', files, 'docs')).toBe(
      "its scheme is 'db+postgres:'; every URI of source 'docs' starts with file:///docs/",
    );
    expect(grantPatternProblem('docs/eng/**', files, 'docs')).toMatch(/^it has no scheme/);
  });

  it('names an authority where the URIs have none', () => {
    expect(grantPatternProblem('file://docs/eng/**', files, 'docs')).toBe(
      "it has the authority 'docs' (between '//' and the next '/'), and these URIs have none; every URI of source 'docs' starts with file:///docs/",
    );
    expect(grantPatternProblem('s3://my-bucket/reports/**', s3, 'reports')).toMatch(/authority 'my-bucket'/);
  });

  it('names a doubled slash where the source has no empty segments', () => {
    for (const pattern of ['file:////docs/**', 'file:///docs//eng/**', 'file:///docs/**//x']) {
      expect(grantPatternProblem(pattern, files, 'docs'), pattern).toBe(
        "it has an empty path segment ('//'), and no URI of source 'docs' has one",
      );
    }
    expect(grantPatternProblem('db+postgres:///crm/public//t', postgres, 'crm')).toMatch(/empty path segment/);
  });

  it("names another source's id", () => {
    expect(grantPatternProblem('file:///handbook/**', files, 'docs')).toBe(
      "it names 'handbook', not this grant's source 'docs'; every URI of source 'docs' starts with file:///docs/",
    );
    expect(grantPatternProblem('file:///handbook', files, 'docs')).toMatch(/names 'handbook'/);
    expect(grantPatternProblem('s3:///sales/2024/*', s3, 'reports')).toMatch(/names 'sales'/);
  });

  it("lists a static source's own URIs when none can match", () => {
    expect(grantPatternProblem('test://other/**', fixtures, 'fixtures')).toBe(
      "no URI of source 'fixtures' can match it (they start with test://static-text, test://template/)",
    );
  });

  it('never refuses a pattern that matches a URI of the source (property)', () => {
    // URIs shaped like a files source's; patterns cut from them with wildcards.
    const segment = fc.constantFrom('a', 'b', 'docs', 'eng', 'x.md');
    const uri = fc
      .tuple(fc.array(segment, { maxLength: 4 }), fc.boolean())
      .map(([segments, folder]) => `file:///docs/${segments.join('/')}${folder && segments.length > 0 ? '/' : ''}`);
    const cut = fc.array(fc.tuple(fc.nat(), fc.nat({ max: 6 }), fc.constantFrom('*', '**')), { maxLength: 3 });
    fc.assert(
      fc.property(uri, cut, (text, cuts) => {
        let pattern = text;
        for (const [at, length, wildcard] of cuts) {
          const start = at % (pattern.length + 1);
          pattern = pattern.slice(0, start) + wildcard + pattern.slice(start + length);
        }
        fc.pre(compileUriPattern(pattern).matches(text));
        expect(grantPatternProblem(pattern, files, 'docs'), pattern).toBeUndefined();
      }),
      { numRuns: 5_000 },
    );
  });
});

import { describe, expect, it } from 'vitest';
import type { UriSpace } from '@mcpgw/core';
import { grantPatternProblem } from '../src/index.js';

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
});

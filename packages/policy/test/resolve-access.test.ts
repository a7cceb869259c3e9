import { describe, expect, it } from 'vitest';
import type { Principal } from '@mcpgw/core';
import type { Grant } from '../src/grant.js';
import type { UriPattern } from '../src/uri-pattern.js';
import { compileGrants } from '../src/compile-grants.js';
import { resolveAccess } from '../src/resolve-access.js';

const alice: Principal = {
  issuer: 'https://idp.a',
  subject: 'alice',
  clientId: 'claude',
  scopes: ['mcp:read'],
  groups: ['eng'],
  expiresAt: 0,
};
const grants: Grant[] = [
  { name: 'eng-docs', match: { groups: ['eng'] }, allow: [{ source: 'docs', uris: ['file:///docs/eng/**'] }] },
  { name: 'readers', match: { scopes: ['mcp:read'], clientIds: ['claude'] }, allow: [{ source: 'handbook' }] },
  { name: 'finance', match: { groups: ['finance'] }, allow: [{ source: 'db' }] },
];

describe('resolveAccess', () => {
  it('unions the grants that match and nothing else', () => {
    const scope = resolveAccess('acme', alice, grants);
    expect(scope.allowsSource('docs')).toBe(true);
    expect(scope.allowsSource('handbook')).toBe(true);
    expect(scope.allowsSource('db')).toBe(false);
    expect(scope.allows('docs', 'file:///docs/eng/a/b.md')).toBe(true);
    expect(scope.allows('docs', 'file:///docs/hr/pay.md')).toBe(false);
    expect(scope.allows('handbook', 'file:///handbook/anything')).toBe(true);
    expect(scope.allows('db', 'db+postgres:///db/public')).toBe(false);
  });

  it('needs every present matcher (AND) with any listed value (OR)', () => {
    expect(resolveAccess('acme', { ...alice, clientId: 'other' }, grants).allowsSource('handbook')).toBe(false);
    expect(resolveAccess('acme', { ...alice, clientId: undefined }, grants).allowsSource('handbook')).toBe(false);
    expect(resolveAccess('acme', { ...alice, groups: ['finance', 'x'] }, grants).allowsSource('db')).toBe(true);
  });

  it('sees nothing when no grant matches', () => {
    const scope = resolveAccess('acme', { ...alice, scopes: [], groups: [] }, grants);
    expect(scope.allowsSource('docs') || scope.allowsSource('handbook') || scope.allowsSource('db')).toBe(false);
  });

  it('refuses ambiguous URIs even inside an allowed prefix', () => {
    const scope = resolveAccess('acme', alice, grants);
    for (const uri of [
      'file:///docs/eng/../hr/pay.md',
      'file:///docs/eng/%2e%2e/hr/pay.md',
      'file:///docs/eng/x%2F..%2Fhr',
      'file:///docs/eng/a\\..\\b',
      'file:///docs/eng/a\u0000',
      'file:///docs/eng/./a',
    ]) {
      expect(scope.allows('docs', uri), uri).toBe(false);
    }
  });

  it('runs the matchers compiled at load and compiles nothing per request', () => {
    const compiled = compileGrants(grants);
    const seen: string[] = [];
    const spy: UriPattern = {
      source: 'file:///docs/eng/**',
      matches: (uri) => (seen.push(uri), uri.startsWith('file:///docs/eng/')),
      matchesSomeUriStartingWith: () => true,
    };
    const allow = grants[0]!.allow[0]!;
    const patterns = new Map(compiled.patterns).set(allow, [spy]);
    const scope = resolveAccess('acme', alice, { grants: compiled.grants, patterns });
    expect(scope.allows('docs', 'file:///docs/eng/a.md')).toBe(true);
    expect(scope.allows('docs', 'file:///docs/hr/a.md')).toBe(false);
    expect(seen).toEqual(['file:///docs/eng/a.md', 'file:///docs/hr/a.md']);
    // Compiled or not, the same grants give the same scope.
    expect(resolveAccess('acme', alice, compiled).fingerprint).toBe(resolveAccess('acme', alice, grants).fingerprint);
  });

  it('fingerprints exactly the inputs the policy used', () => {
    const base = resolveAccess('acme', alice, grants).fingerprint;
    // Same inputs, other token details: same fingerprint.
    expect(resolveAccess('acme', { ...alice, expiresAt: 99 }, grants).fingerprint).toBe(base);
    expect(resolveAccess('acme', alice, [...grants].reverse()).fingerprint).not.toBe(base); // grant order is part of the set's identity
    expect(resolveAccess('other', alice, grants).fingerprint).not.toBe(base);
    expect(resolveAccess('acme', { ...alice, subject: 'bob' }, grants).fingerprint).not.toBe(base);
    expect(resolveAccess('acme', { ...alice, issuer: 'https://idp.b' }, grants).fingerprint).not.toBe(base);
    const edited = grants.map((g) => (g.name === 'eng-docs' ? { ...g, allow: [{ source: 'docs' }] } : g));
    expect(resolveAccess('acme', alice, edited).fingerprint).not.toBe(base);
    // A grant that does not match this caller does not change the caller's fingerprint.
    expect(
      resolveAccess('acme', alice, [...grants, { name: 'x', match: { subjects: ['zed'] }, allow: [{ source: 'db' }] }])
        .fingerprint,
    ).toBe(base);
  });
});

describe('resolveAccess: principals with the same grants', () => {
  const compiled = compileGrants(grants);
  const bob: Principal = { ...alice, subject: 'bob' };
  const carol: Principal = { ...alice, subject: 'carol', groups: ['finance'] };

  it('share one view of what they may see, and keep fingerprints of their own', () => {
    const a = resolveAccess('acme', alice, compiled);
    const b = resolveAccess('acme', bob, compiled);
    expect(b.view).toBe(a.view);
    expect(b.fingerprint).not.toBe(a.fingerprint);
    // One copy of the compiled rules for the view, not one per principal.
    expect(b.allows).toBe(a.allows);
    expect(b.listingRanges).toBe(a.listingRanges);
    expect(b.allows('docs', 'file:///docs/eng/a.md')).toBe(true);
    expect(b.allows('docs', 'file:///docs/finance/a.md')).toBe(false);
  });

  it('never share with a principal whose grants differ, nor across tenants', () => {
    const a = resolveAccess('acme', alice, compiled);
    const c = resolveAccess('acme', carol, compiled);
    expect(c.view).not.toBe(a.view);
    expect(c.allows).not.toBe(a.allows);
    expect(c.allowsSource('db')).toBe(true);
    expect(c.allowsSource('docs')).toBe(false);
    expect(a.allowsSource('db')).toBe(false);
    const other = resolveAccess('globex', alice, compiled);
    expect(other.view).not.toBe(a.view);
    expect(other.allows).not.toBe(a.allows);
  });
});

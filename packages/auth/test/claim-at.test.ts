import { describe, expect, it } from 'vitest';
import { claimAt } from '../src/claim-at.js';
import { principalFromClaims } from '../src/principal-from-claims.js';
import type { IssuerSettings } from '../src/issuer-settings.js';

const settings = (groupsClaim: string, scopeClaim = 'scope'): IssuerSettings => ({
  issuer: 'https://idp.example',
  keys: { jwksUri: 'https://idp.example/jwks' },
  algorithms: ['ES256'],
  audiences: [],
  tokenTypes: ['at+jwt'],
  scopeClaim,
  groupsClaim,
  clockToleranceSeconds: 0,
});

describe('claim names in the configuration', () => {
  it('read a nested path such as Keycloak realm_access.roles and resource_access.<client>.roles', () => {
    const claims = {
      sub: 'u',
      realm_access: { roles: ['admin', 'reader'] },
      resource_access: { 'my-client': { roles: ['writer'] } },
    };
    expect(principalFromClaims(claims, settings('realm_access.roles'), 0).groups).toEqual(['admin', 'reader']);
    expect(principalFromClaims(claims, settings('resource_access.my-client.roles'), 0).groups).toEqual(['writer']);
  });

  it('prefer a claim whose own name contains dots (collision-resistant names, RFC 7519 section 4.2)', () => {
    const claims = { 'https://example.com/roles': ['a'], https: { '//example': { com: 'no' } } };
    expect(claimAt(claims, 'https://example.com/roles')).toEqual(['a']);
    expect(claimAt({ 'a.b': 1, a: { b: 2 } }, 'a.b')).toBe(1);
  });

  it('give nothing for a path that stops early, runs through an array, or names inherited properties', () => {
    expect(claimAt({ a: 'x' }, 'a.b')).toBeUndefined();
    expect(claimAt({ a: [{ b: 1 }] }, 'a.0.b')).toBeUndefined();
    expect(claimAt({ a: {} }, 'a.constructor')).toBeUndefined();
    expect(claimAt({}, '__proto__.toString')).toBeUndefined();
    expect(principalFromClaims({ sub: 'u' }, settings('realm_access.roles'), 0).groups).toEqual([]);
  });

  it('refuse a token whose nested claim has the wrong type, as for a flat one', () => {
    expect(() =>
      principalFromClaims({ sub: 'u', realm_access: { roles: [1] } }, settings('realm_access.roles'), 0),
    ).toThrow(/groups claim is malformed/);
  });
});

describe('principals of one client and role', () => {
  it('share one frozen copy of equal scope and group lists and keep their own subjects', () => {
    const one = principalFromClaims(
      { sub: 'alice', client_id: 'app', scope: 'mcp:read', roles: ['reader'] },
      settings('roles'),
      0,
    );
    const two = principalFromClaims(
      { sub: 'bob', client_id: 'app', scope: 'mcp:read', roles: ['reader'] },
      settings('roles'),
      0,
    );
    expect(two.scopes).toBe(one.scopes);
    expect(two.groups).toBe(one.groups);
    expect(Object.isFrozen(one.scopes) && Object.isFrozen(one.groups)).toBe(true);
    expect([one.subject, two.subject]).toEqual(['alice', 'bob']);
    expect(two.clientId).toBe('app');
    const other = principalFromClaims({ sub: 'carol', scope: 'mcp:read mcp:write', roles: [] }, settings('roles'), 0);
    expect(other.scopes).toEqual(['mcp:read', 'mcp:write']);
    expect(other.groups).toEqual([]);
    expect(other.clientId).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Principal } from '@mcpgw/core';
import type { GrantMatch } from '../src/grant.js';
import { compileGrants } from '../src/compile-grants.js';
import { unmetConditions } from '../src/grant-conditions.js';
import { matchingGrants } from '../src/resolve-access.js';

const alice: Principal = {
  issuer: 'https://idp.a',
  subject: 'alice',
  clientId: 'claude',
  scopes: ['mcp:read'],
  groups: ['eng'],
  expiresAt: 0,
};

describe('unmetConditions', () => {
  it('is empty for a grant the principal matches, and for an empty match', () => {
    expect(unmetConditions({ groups: ['eng', 'ops'], scopes: ['mcp:read'] }, alice)).toEqual([]);
    expect(unmetConditions({}, alice)).toEqual([]);
  });

  it('names every failing matcher with what it wants and what the principal holds', () => {
    expect(
      unmetConditions({ groups: ['finance'], subjects: ['bob'], issuers: ['https://idp.a'], clientIds: ['x'] }, alice),
    ).toEqual([
      { matcher: 'groups', wants: ['finance'], held: ['eng'] },
      { matcher: 'subjects', wants: ['bob'], held: ['alice'] },
      { matcher: 'clientIds', wants: ['x'], held: ['claude'] },
    ]);
  });

  it('treats a principal without a client id as holding none', () => {
    const { clientId: _none, ...anonymousClient } = alice;
    expect(unmetConditions({ clientIds: ['claude'] }, anonymousClient)).toEqual([
      { matcher: 'clientIds', wants: ['claude'], held: [] },
    ]);
  });

  it('agrees with matchingGrants, the filter the gateway resolves access with', () => {
    const value = fc.constantFrom('a', 'b', 'c');
    const list = fc.option(fc.array(value, { minLength: 1, maxLength: 3 }), { nil: undefined });
    const match = fc.record({ scopes: list, groups: list, subjects: list, clientIds: list, issuers: list });
    const principal = fc.record({
      issuer: value,
      subject: value,
      clientId: fc.option(value, { nil: undefined }),
      scopes: fc.array(value, { maxLength: 3 }),
      groups: fc.array(value, { maxLength: 3 }),
      expiresAt: fc.constant(0),
    });
    fc.assert(
      fc.property(match, principal, (raw, who) => {
        const grantMatch = Object.fromEntries(
          Object.entries(raw).filter(([, values]) => values !== undefined),
        ) as GrantMatch;
        const compiled = compileGrants([{ name: 'g', match: grantMatch, allow: [{ source: 's' }] }]);
        const matched = matchingGrants(compiled, who).length === 1;
        expect(unmetConditions(grantMatch, who).length === 0).toBe(matched);
      }),
    );
  });
});

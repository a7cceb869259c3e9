import { authorizationServerSchema, type ClaimMapping } from '@mcpgw/config';
import { describe, expect, it } from 'vitest';
import { MAX_GROUPS, mapUpstreamClaims, mappedClaimPaths } from '../../src/upstream/claim-mapping.js';
import { UpstreamSignInError } from '../../src/upstream/upstream-sign-in-error.js';

const UPSTREAM = 'https://login.example.com/tenant/v2.0';

/** A mapping as the tenant's settings give it, defaults filled in by the configuration schema. */
const mapping = (claims: Record<string, unknown> = {}): ClaimMapping =>
  authorizationServerSchema.shape.claims.parse(claims);

const map = (claims: Record<string, unknown>, settings: ClaimMapping = mapping()) =>
  mapUpstreamClaims(settings, { upstreamIssuer: UPSTREAM, claims });

describe('mapUpstreamClaims', () => {
  it('takes sub, email, name and groups by default', () => {
    const account = map({ sub: 'u-1', email: 'ada@example.com', name: 'Ada', groups: ['finance'], tid: 'x' });
    expect(account).toEqual({
      accountId: 'u-1',
      upstreamIssuer: UPSTREAM,
      claims: { email: 'ada@example.com', name: 'Ada', groups: ['finance'] },
      dropped: [],
    });
  });

  it('follows the mapping: Entra object id as subject, app roles as groups, extra claims', () => {
    const settings = mapping({
      subject: 'oid',
      groups: 'roles',
      extra: { tenant_id: 'tid', upn: 'preferred_username' },
    });
    const account = map(
      {
        sub: 'pairwise',
        oid: '0b7c4f1e-0000-4000-8000-000000000001',
        roles: ['Reader'],
        tid: 'tenant',
        preferred_username: 'ada@corp',
      },
      settings,
    );
    expect(account.accountId).toBe('0b7c4f1e-0000-4000-8000-000000000001');
    expect(account.claims).toEqual({ groups: ['Reader'], tenant_id: 'tenant', upn: 'ada@corp' });
  });

  it('reads nested paths, and a flat claim whose name has dots before a path', () => {
    const settings = mapping({ groups: 'realm_access.roles', extra: { site: 'https://example.com/site' } });
    const account = map(
      { sub: 'k', realm_access: { roles: ['admin'] }, 'https://example.com/site': 'lab', https: { never: 1 } },
      settings,
    );
    expect(account.claims).toEqual({ groups: ['admin'], site: 'lab' });
    expect(mappedClaimPaths(settings)).toEqual([
      'sub',
      'email',
      'name',
      'realm_access.roles',
      'https://example.com/site',
    ]);
  });

  it('takes one group from a string claim, as it stands (group names may have spaces)', () => {
    expect(map({ sub: 'u', groups: 'Finance Team' }).claims.groups).toEqual(['Finance Team']);
  });

  describe('refuses a sign-in without a usable subject', () => {
    const bad: [string, Record<string, unknown>][] = [
      ['absent', {}],
      ['empty', { sub: '' }],
      ['an object', { sub: { id: 'u' } }],
      ['an array', { sub: ['u'] }],
      ['a fraction', { sub: 1.5 }],
      ['longer than 255 characters', { sub: 'u'.repeat(256) }],
      ['with a control character', { sub: 'u\nadmin' }],
    ];
    for (const [what, claims] of bad) {
      it(what, () => {
        let caught: unknown;
        try {
          map(claims);
        } catch (error) {
          caught = error;
        }
        expect(caught).toBeInstanceOf(UpstreamSignInError);
        expect((caught as UpstreamSignInError).code).toBe('subject_missing');
        expect((caught as UpstreamSignInError).message).toContain('subject claim mapping');
      });
    }
    it('but takes an integer subject as text', () => {
      expect(map({ sub: 12345 }).accountId).toBe('12345');
    });
  });

  it('caps groups at the first MAX_GROUPS distinct names and drops what is not a name', () => {
    const groups = [
      'dup',
      'dup',
      ...Array.from({ length: 10_000 }, (_, index) => `g${index}`),
      7,
      true,
      null,
      { name: 'admin' },
      ['nested'],
      '',
      'bad\u0000name',
      'y'.repeat(257),
    ];
    const account = map({ sub: 'u', groups });
    expect(account.claims.groups).toHaveLength(MAX_GROUPS);
    expect(account.claims.groups!.slice(0, 2)).toEqual(['dup', 'g0']);
    expect(account.dropped).toEqual([
      'groups ("groups"): 8 entries that are not names of at most 256 characters',
      'groups ("groups"): 9801 past the first 200',
    ]);
    // What the access token would carry stays small whatever the provider sent.
    expect(JSON.stringify(account.claims).length).toBeLessThan(MAX_GROUPS * 300);
  });

  it('drops a groups claim that is neither a string nor an array', () => {
    const account = map({ sub: 'u', groups: { admin: true } });
    expect(account.claims).not.toHaveProperty('groups');
    expect(account.dropped).toEqual(['groups ("groups"): neither a string nor an array']);
  });

  it('names Entra ID’s groups overage', () => {
    const account = map({
      sub: 'u',
      _claim_names: { groups: 'src1' },
      _claim_sources: { src1: { endpoint: 'https://graph' } },
    });
    expect(account.claims).not.toHaveProperty('groups');
    expect(account.dropped[0]).toMatch(/Entra ID does past 200 groups/);
  });

  it('cuts a long name, and drops a name or email that is not text', () => {
    const long = map({ sub: 'u', name: '😀'.repeat(300), email: 'not an address' });
    expect(Array.from(long.claims.name!)).toHaveLength(256);
    expect(long.claims.name!.endsWith('😀')).toBe(true);
    expect(long.claims).not.toHaveProperty('email');
    const odd = map({ sub: 'u', name: { first: 'A' }, email: ['a@example.com'] });
    expect(odd.claims).toEqual({});
    expect(odd.dropped).toHaveLength(2);
  });

  it('bounds extra claims, one by one and together, and copies them as plain JSON', () => {
    const settings = mapping({
      extra: { small: 'small', big: 'big', a: 'a', b: 'b', c: 'c', d: 'd', e: 'e', missing: 'nowhere' },
    });
    const kilobyte = 'k'.repeat(1000);
    const account = map(
      {
        sub: 'u',
        small: { nested: [1, true, null] },
        big: 'b'.repeat(2000),
        a: kilobyte,
        b: kilobyte,
        c: kilobyte,
        d: kilobyte,
        e: kilobyte,
      },
      settings,
    );
    expect(account.claims.small).toEqual({ nested: [1, true, null] });
    expect(account.claims).not.toHaveProperty('big');
    expect(account.claims).not.toHaveProperty('missing');
    // Four of the five kilobyte values fit under the 4 KiB total.
    expect(['a', 'b', 'c', 'd', 'e'].filter((name) => name in account.claims)).toEqual(['a', 'b', 'c', 'd']);
    expect(account.dropped).toEqual([
      'big ("big"): larger than the extra claims may be',
      'e ("e"): larger than the extra claims may be',
    ]);
  });

  it('never lets an extra claim replace one the authorization server sets', () => {
    const settings = mapping({ extra: { scope: 'roles', client_id: 'appid', groups: 'wids', aud: 'aud' } });
    const account = map({ sub: 'u', roles: 'admin', appid: 'x', wids: ['w'], aud: 'a' }, settings);
    expect(account.claims).toEqual({});
    expect(account.dropped).toHaveLength(4);
  });

  it('reads no inherited properties of the claims object', () => {
    const settings = mapping({ subject: 'constructor', extra: { proto: '__proto__.polluted' } });
    let caught: unknown;
    try {
      map(JSON.parse('{"__proto__": {"polluted": "yes"}}') as Record<string, unknown>, settings);
    } catch (error) {
      caught = error;
    }
    expect((caught as UpstreamSignInError).code).toBe('subject_missing');
    const account = map(
      JSON.parse('{"sub": "u", "__proto__": {"polluted": "yes"}}') as Record<string, unknown>,
      mapping({ extra: { proto: '__proto__.polluted' } }),
    );
    // An own "__proto__" claim is a claim like any other; nothing reaches Object.prototype.
    expect(account.claims.proto).toBe('yes');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

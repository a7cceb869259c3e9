import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCachingSource, createGatewayCache, withResultCache, type GatewayCache } from '@mcpgw/cache';
import { createCatalog } from '@mcpgw/catalog';
import type { Principal, ResourceContents, Source } from '@mcpgw/core';
import { silentLogger } from '@mcpgw/core';
import { resolveAccess } from '@mcpgw/policy';
import { createCursorCodec, type ResourceService } from '@mcpgw/protocol';
import { createPostgresSource, postgresSourceOptionsSchema } from '@mcpgw/source-postgres';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';

// Both cache layers above a Postgres source that answers each caller under
// their own database role and settings: the source's listing pages (shared
// by the tenant) and each caller's finished results (shared by callers with
// equal grants). Neither may hand one backend identity's answer to another,
// even to a caller with the same fingerprint and view (same subject and
// grants, other groups, so another role). Callers with one identity share.

const P = 'db+postgres:///crm';
const cursors = createCursorCodec({ key: Buffer.from('c'.repeat(32)) });
const signal = new AbortController().signal;
/** One grant for every caller: the same view for all, so only the backend identity tells them apart. */
const GRANTS = [{ name: 'staff', match: { scopes: ['staff'] }, allow: [{ source: 'crm' }] }];

let db: TestDatabase;
let raw: Source;
let cache: GatewayCache;
let catalog: ReturnType<typeof withResultCache<ReturnType<typeof createCatalog>>>;
let roles: { login: string; sales: string; support: string };

beforeAll(async () => {
  db = await createTestDatabase('identity_cache');
  const suffix = randomBytes(4).toString('hex');
  roles = { login: `mcpgw_login_${suffix}`, sales: `mcpgw_sales_${suffix}`, support: `mcpgw_support_${suffix}` };
  await db.sql(`
    CREATE ROLE ${roles.login} LOGIN NOINHERIT;
    CREATE ROLE ${roles.sales} NOLOGIN;
    CREATE ROLE ${roles.support} NOLOGIN;
    GRANT ${roles.sales}, ${roles.support} TO ${roles.login};
    CREATE TABLE public.accounts (id int PRIMARY KEY, owner text NOT NULL);
    INSERT INTO public.accounts VALUES (1, 'alice'), (2, 'bob'), (3, 'carol'), (4, 'alice');
    ALTER TABLE public.accounts ENABLE ROW LEVEL SECURITY;
    CREATE POLICY own_rows ON public.accounts FOR SELECT TO ${roles.support}
      USING (owner = current_setting('mcpgw.subject', true));
    CREATE POLICY every_row ON public.accounts FOR SELECT TO ${roles.sales} USING (true);
    CREATE TABLE public.deals (id int PRIMARY KEY);
    INSERT INTO public.deals VALUES (1), (2);
    GRANT SELECT ON public.accounts, public.deals TO ${roles.sales};
    GRANT SELECT ON public.accounts TO ${roles.support};
  `);
  const url = new URL(db.url);
  url.username = roles.login;
  const options = postgresSourceOptionsSchema.parse({
    connection: { url: url.toString() },
    schemas: ['public'],
    rows: { enabled: true },
    changeDetection: { mode: 'off' },
    callerIdentity: {
      roles: [roles.sales, roles.support],
      mapping: [
        { match: { groups: ['sales'] }, role: roles.sales },
        { match: { groups: ['support'] }, role: roles.support },
      ],
      // The subject reaches the policy; groups only choose the role.
      settings: ['subject'],
    },
  });
  raw = createPostgresSource(options, 'crm', silentLogger);
  cache = createGatewayCache({ key: randomBytes(32) });
  catalog = withResultCache(
    createCatalog({
      tenantId: 'acme',
      sources: [createCachingSource(raw, { tenantId: 'acme', cache })],
      cursors,
    }),
    cache,
  );
}, 60_000);

afterAll(async () => {
  await raw?.close();
  await cache?.close();
  // Roles outlive the database: their grants in it go first, then they do.
  const names = Object.values(roles ?? {}).join(', ');
  if (names !== '') await db?.sql(`DROP OWNED BY ${names}; DROP ROLE ${names}`);
  await db?.drop();
});

/** A fresh verified token's principal (a new object, as every new token gives). */
const principal = (subject: string, groups: readonly string[]): Principal => ({
  issuer: 'https://idp.example',
  subject,
  scopes: ['staff'],
  groups: [...groups],
  expiresAt: 4_000_000_000,
});

const serviceOf = (who: Principal): ResourceService => catalog.forScope(resolveAccess('acme', who, GRANTS));

const textOf = (contents: readonly ResourceContents[] | undefined): string => {
  const first = contents?.[0];
  return first !== undefined && 'text' in first ? first.text : '(none)';
};

/** What the caller sees through both caches. */
async function seen(who: Principal, op: 'list' | 'rows'): Promise<string> {
  const service = serviceOf(who);
  if (op === 'list')
    return JSON.stringify((await service.listResources(undefined, signal)).resources.map((r) => r.uri));
  return textOf((await service.read(`${P}/public/accounts/rows`, signal))?.contents);
}

/** What the source itself answers the caller, no cache anywhere. */
async function truth(who: Principal, op: 'list' | 'rows'): Promise<string> {
  const caller = resolveAccess('acme', who, GRANTS).caller!;
  if (op === 'list') return JSON.stringify((await raw.listResources({ limit: 100, caller })).items.map((i) => i.uri));
  return textOf(await raw.read(`${P}/public/accounts/rows`, undefined, undefined, caller));
}

const ownersIn = (text: string): string[] =>
  (JSON.parse(text) as { rows: { owner: string }[] }).rows.map((row) => row.owner);

describe('caches above a source that answers under each caller identity', () => {
  it('never serves one identity to a caller with the same fingerprint and view but another role', async () => {
    const asSupport = principal('alice', ['support']);
    const asSales = principal('alice', ['sales']);
    const scopeA = resolveAccess('acme', asSupport, GRANTS);
    const scopeB = resolveAccess('acme', asSales, GRANTS);
    // The premise: the grants cannot tell these two apart.
    expect(scopeA.fingerprint).toBe(scopeB.fingerprint);
    expect(scopeA.view).toBe(scopeB.view);

    expect(ownersIn(await seen(asSupport, 'rows'))).toEqual(['alice', 'alice']);
    expect(ownersIn(await seen(asSales, 'rows'))).toEqual(['alice', 'bob', 'carol', 'alice']);
    expect(ownersIn(await seen(principal('alice', ['support']), 'rows'))).toEqual(['alice', 'alice']);
    expect(JSON.parse(await seen(asSupport, 'list'))).toEqual([`${P}/public`, `${P}/public/accounts`]);
    expect(JSON.parse(await seen(asSales, 'list'))).toEqual([
      `${P}/public`,
      `${P}/public/accounts`,
      `${P}/public/deals`,
    ]);
  });

  it('shares between callers with the same backend identity', async () => {
    await seen(principal('bob', ['support']), 'rows');
    const before = cache.metrics().acme!.result.hits;
    // Another token, the same claims: the same role and settings.
    expect(ownersIn(await seen(principal('bob', ['support']), 'rows'))).toEqual(['bob']);
    expect(cache.metrics().acme!.result.hits).toBe(before + 1);
  });

  it('gives every caller exactly what the source gives them, whatever was cached before (property)', async () => {
    const subjects = ['alice', 'bob', 'carol', 'dave', "o'brien; --"];
    const groupSets = [[], ['support'], ['sales'], ['support', 'sales'], ['sales', 'support'], ['visitors']];
    const step = fc.record({
      subject: fc.constantFrom(...subjects),
      groups: fc.constantFrom(...groupSets),
      op: fc.constantFrom<'list' | 'rows'>('list', 'rows'),
    });
    const truths = new Map<string, string>();
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 30 }), async (steps) => {
        for (const { subject, groups, op } of steps) {
          const who = principal(subject, groups);
          const id = JSON.stringify([subject, groups, op]);
          if (!truths.has(id)) truths.set(id, await truth(who, op));
          expect(await seen(who, op), id).toBe(truths.get(id));
        }
      }),
      { numRuns: 40, seed: 20_261_202 },
    );
    // The run went through the caches, not around them.
    expect(cache.metrics().acme!.result.hits).toBeGreaterThan(100);
  }, 60_000);
});

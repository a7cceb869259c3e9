import { describe, expect, it } from 'vitest';
import type { Source, SourceCaller } from '@mcpgw/core';
import { DEFAULT_SOURCE_TTL_MS } from '@mcpgw/core';
import { createBackendViews } from '../src/backend-views.js';

// The views listen streams decide a backend-identity source's changes
// against: one listing per identity and event, shared by every stream of
// that identity, both sides of a change, and nothing known after a failure.
// The source is an in-memory one whose listing follows the caller's group,
// as a database role's would, and counts what it is asked.

interface RoleSource extends Source {
  /** URIs listed per role. */
  readonly byRole: Map<string, string[]>;
  readonly listings: string[];
  failing: boolean;
}

function roleSource(): RoleSource {
  const roleOf = (caller: SourceCaller | undefined) => caller?.principal.groups[0] ?? 'none';
  const source: RoleSource = {
    id: 'crm',
    kind: 'test',
    ttlMs: DEFAULT_SOURCE_TTL_MS,
    byRole: new Map(),
    listings: [],
    failing: false,
    async listResources(page) {
      const role = roleOf(page.caller);
      source.listings.push(role);
      if (source.failing) throw new Error('role cannot be used');
      const all = source.byRole.get(role) ?? [];
      // Two per page, so a view is gathered across pages.
      const from = page.position === undefined ? 0 : Number(page.position);
      const items = all.slice(from, from + 2).map((uri) => ({ uri, name: uri }));
      return from + 2 < all.length ? { items, nextPosition: String(from + 2) } : { items };
    },
    listTemplates: async () => [],
    owns: (uri) => uri.startsWith('db:///crm/'),
    read: async () => undefined,
    backendIdentity: (caller) => ({ key: roleOf(caller), shown: { role: roleOf(caller) } }),
    health: async () => ({ ok: true }),
    close: async () => undefined,
  };
  return source;
}

const callerIn = (subject: string, group: string): SourceCaller => ({
  tenantId: 'acme',
  principal: { issuer: 'https://idp.example', subject, scopes: [], groups: [group], expiresAt: 4_000_000_000 },
  fingerprint: `fp-${subject}`,
});

const sam = callerIn('sam', 'sales');
const sue = callerIn('sue', 'sales');
const alice = callerIn('alice', 'support');

describe('backend views of listen streams', () => {
  it('lists once per identity and event, for every stream of that identity', async () => {
    const source = roleSource();
    source.byRole.set('sales', ['db:///crm/a', 'db:///crm/b', 'db:///crm/c']);
    source.byRole.set('support', ['db:///crm/a']);
    const views = createBackendViews({ pageSize: 2 });
    views.hold('acme', source, sam);
    views.hold('acme', source, sue);
    views.hold('acme', source, alice);
    await views.look('acme', source, sam, {}, false);
    await views.look('acme', source, alice, {}, false);
    // One listing per identity when held (two pages for sales).
    expect(source.listings.sort()).toEqual(['sales', 'sales', 'support']);

    source.byRole.set('sales', ['db:///crm/a', 'db:///crm/b', 'db:///crm/c', 'db:///crm/deals']);
    source.listings.length = 0;
    const event = {};
    const [forSam, forSue, forAlice] = await Promise.all([
      views.look('acme', source, sam, event, true),
      views.look('acme', source, sue, event, true),
      views.look('acme', source, alice, event, true),
    ]);
    expect(source.listings.sort()).toEqual(['sales', 'sales', 'support']);
    expect(forSam).toBe(forSue);
    expect(forSam?.shows('db:///crm/deals')).toBe(true);
    expect(forAlice?.shows('db:///crm/deals')).toBe(false);
    expect(forAlice?.shows('db:///crm/a')).toBe(true);
  });

  it('shows what went, from the listing before the change, and what stays, until the next one', async () => {
    const source = roleSource();
    source.byRole.set('sales', ['db:///crm/a', 'db:///crm/deals']);
    const views = createBackendViews();
    views.hold('acme', source, sam);
    source.byRole.set('sales', ['db:///crm/a']);
    const dropped = await views.look('acme', source, sam, {}, true);
    expect(dropped?.shows('db:///crm/deals')).toBe(true);
    // An update after it (the schema overview, because of the dropped table) still sees both sides.
    expect((await views.look('acme', source, sam, {}, false))?.shows('db:///crm/deals')).toBe(true);
    // The next change that lists again leaves the dropped table behind.
    expect((await views.look('acme', source, sam, {}, true))?.shows('db:///crm/deals')).toBe(false);
  });

  it('knows nothing when the listing fails or nobody holds the identity, and keeps what it knew', async () => {
    const source = roleSource();
    source.byRole.set('sales', ['db:///crm/a']);
    const views = createBackendViews();
    const release = views.hold('acme', source, sam);
    source.failing = true;
    expect(await views.look('acme', source, sam, {}, true)).toBeUndefined();
    source.failing = false;
    expect((await views.look('acme', source, sam, {}, false))?.shows('db:///crm/a')).toBe(true);
    release();
    release();
    expect(await views.look('acme', source, sam, {}, false)).toBeUndefined();
  });

  it('stops at its bound, and what it did not reach is not shown', async () => {
    const source = roleSource();
    source.byRole.set('sales', ['db:///crm/1', 'db:///crm/2', 'db:///crm/3', 'db:///crm/4', 'db:///crm/5']);
    const views = createBackendViews({ pageSize: 2, maxUris: 2 });
    views.hold('acme', source, sam);
    const view = await views.look('acme', source, sam, {}, false);
    expect(view?.shows('db:///crm/2')).toBe(true);
    expect(view?.shows('db:///crm/5')).toBe(false);
  });
});

import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayCache } from '@mcpgw/cache';
import { createPostgresDatabase, createPostgresLeases, openPostgresReplicaBus } from '@mcpgw/control-plane';
import type { Source } from '@mcpgw/core';
import { ChangeHub, DEFAULT_SOURCE_TTL_MS, silentLogger } from '@mcpgw/core';
import type { TenantEvent } from '@mcpgw/events';
import { openGatewayEvents } from '@mcpgw/events';
import { type TestDatabase, createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { collectEvents } from '@mcpgw/test-helpers/tenant-event-collector';
import { within } from '@mcpgw/test-helpers/within';

// A source's change detection runs once in a deployment whose replica bus
// rides Postgres (docs/adr/0012-one-bus-two-transports.md): its lease is a
// session advisory lock. Two replicas, each its bus, its leases and the
// gateway's tenant events (openGatewayEvents, as the app composes them) on one
// real Postgres, serve a tenant with a source around the real ChangeHub, so a
// test sees where detection runs (`hub.active`) and makes a change happen.

let db: TestDatabase;
let admin: pg.Client;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  db = await createTestDatabase('pg_lease');
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

afterAll(async () => {
  await admin?.end();
  await db?.drop();
});

function hubSource(id: string): Source & { hub: ChangeHub } {
  const hub = new ChangeHub({ sourceId: id, logger: silentLogger });
  return {
    id,
    kind: 'test',
    ttlMs: DEFAULT_SOURCE_TTL_MS,
    hub,
    listResources: async () => ({ items: [] }),
    listTemplates: async () => [],
    owns: () => false,
    read: async () => undefined,
    watch: (listener) => hub.watch(listener),
    health: async () => ({ ok: true }),
    close: async () => hub.close(),
  };
}

async function replica(retryMs: number) {
  const sql = createPostgresDatabase({ url: db.url });
  const bus = await openPostgresReplicaBus({ url: db.url, db: sql });
  const leases = createPostgresLeases({ url: db.url, retryMs });
  const docs = hubSource('docs');
  const tenant = { config: { sources: [] }, catalog: { sources: [docs] }, auth: undefined };
  const live = openGatewayEvents(undefined, {
    replicaBus: bus,
    redis: undefined,
    leases,
    tenants: { serving: new Map([['acme', tenant]]) },
    cache: createGatewayCache({ key: randomBytes(32), bus }),
    logger: silentLogger,
  });
  const heard = collectEvents<TenantEvent>();
  closers.push(async () => {
    await live.close();
    await leases.close();
    await bus.close();
    await sql.close();
  });
  return { live, leases, docs, heard, listen: () => live.events.subscribe('acme', heard.listener) };
}

const sourceEvents = (events: readonly TenantEvent[]) => events.filter((event) => event.type === 'source');

describe('change detection on a Postgres replica bus', () => {
  it('runs on one of two listening replicas, and each listener hears a change once', async () => {
    const [one, two] = [await replica(100), await replica(100)];
    one.listen();
    two.listen();
    await within(5000, () => expect([one.docs.hub.active, two.docs.hub.active].filter(Boolean)).toHaveLength(1));
    const [holder, follower] = one.docs.hub.active ? [one, two] : [two, one];
    // The follower tried and found the lease taken: it stays out.
    await within(5000, async () => {
      const { rows } = await admin.query<{ query: string }>(
        'SELECT query FROM pg_stat_activity WHERE application_name = $1',
        [follower.leases.connectionName],
      );
      expect(rows[0]?.query).toContain('pg_try_advisory_lock');
    });
    expect(follower.docs.hub.active).toBe(false);
    expect(follower.live.events.detectingSources('acme')).toEqual([]);

    holder.docs.hub.publish({ sourceId: 'docs', kind: 'updated', uris: ['docs://a'] });
    await follower.heard.next((event) => event.type === 'source', 5000);
    // A flush from each replica travels behind anything it published before: once both are heard, nothing is left.
    await holder.live.cache.invalidateTenant('acme');
    await follower.live.cache.invalidateTenant('acme');
    for (const side of [holder, follower]) {
      await within(5000, () =>
        expect(side.heard.events.filter((event) => event.type === 'configuration')).toHaveLength(2),
      );
      expect(sourceEvents(side.heard.events)).toEqual([
        { type: 'source', tenantId: 'acme', sourceId: 'docs', change: { type: 'resource-updated', uri: 'docs://a' } },
      ]);
    }
  });

  it('moves to the other replica when the holder’s lease connection is killed, whose listeners hear `stale`', async () => {
    // The holder retries slowly, so the contender is the first to try after the kill.
    const [one, two] = [await replica(3000), await replica(100)];
    one.listen();
    await within(5000, () => expect(one.docs.hub.active).toBe(true));
    two.listen();
    await within(5000, async () => {
      const { rows } = await admin.query<{ query: string }>(
        'SELECT query FROM pg_stat_activity WHERE application_name = $1',
        [two.leases.connectionName],
      );
      expect(rows[0]?.query).toContain('pg_try_advisory_lock');
    });
    expect(two.docs.hub.active).toBe(false);

    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [
      one.leases.connectionName,
    ]);
    await within(5000, () => expect(two.docs.hub.active).toBe(true));
    // Changes between the kill and the takeover went unnoticed: both replicas' listeners re-read.
    await two.heard.next((event) => event.type === 'stale', 5000);
    await one.heard.next((event) => event.type === 'stale', 5000);
    // The old holder reconnects, finds the lease taken and stops detecting.
    await within(10_000, () => expect(one.docs.hub.active).toBe(false));
    two.docs.hub.publish({ sourceId: 'docs', kind: 'list_changed', uris: ['docs://b'] });
    await one.heard.next((event) => event.type === 'source', 5000);
  });
});

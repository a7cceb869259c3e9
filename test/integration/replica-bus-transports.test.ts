import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayCache } from '@mcpgw/cache';
import { createCachingSource, createGatewayCache, createRedisReplicaBus, openRedisConnection } from '@mcpgw/cache';
import type { ControlPlaneStore, SqlDatabase } from '@mcpgw/control-plane';
import {
  CONTROL_PLANE_CHANNEL,
  createControlPlaneStore,
  createPostgresDatabase,
  createSecretBox,
  migrate,
  openPostgresReplicaBus,
} from '@mcpgw/control-plane';
import type { ReplicaBus, Source } from '@mcpgw/core';
import { DEFAULT_SOURCE_TTL_MS, silentLogger } from '@mcpgw/core';
import type { ReplicaTenantEventBus, TenantEvent } from '@mcpgw/events';
import { createLocalLeases, createReplicaTenantEventBus } from '@mcpgw/events';
import type { TenantSync } from '@mcpgw/tenancy';
import { createTenantRegistry, revisionsTopic, startControlPlaneRelay, startTenantSync } from '@mcpgw/tenancy';
import { type TestDatabase, createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { deleteNamespace, inspector, redisUrl, requireRedis, testNamespace } from '@mcpgw/test-helpers/redis';
import { collectEvents } from '@mcpgw/test-helpers/tenant-event-collector';
import { within } from '@mcpgw/test-helpers/within';

// The replica bus on both of its transports, real Redis and real Postgres
// (docs/adr/0012-one-bus-two-transports.md). Two bus instances stand for two
// replicas, each with the three consumers a replica runs on it: the
// control-plane sync (revisions), the cache (invalidations) and the tenant
// events (source changes). Each kind of message crosses from A to B; then
// B's transport has a gap (its subscriber connection killed by its name) and
// every consumer of B resyncs exactly once.

const secret = randomBytes(32);
let redis: Redis;
let controlDb: TestDatabase;
let db: SqlDatabase;
let store: ControlPlaneStore;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  await requireRedis();
  redis = inspector();
  await redis.connect();
  controlDb = await createTestDatabase('replica_bus');
  db = createPostgresDatabase({ url: controlDb.url });
  await migrate(db);
  store = createControlPlaneStore({ db, secrets: createSecretBox([randomBytes(32)]) });
}, 60_000);

afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  redis?.disconnect();
  await db?.close();
  await controlDb?.drop();
});

/** One replica's end of a transport: its bus, the cache store kind it pairs with, and how to cut it off. */
interface Replica {
  readonly bus: ReplicaBus;
  readonly cache: GatewayCache;
  /** Kills this replica's subscriber connection (a gap); resolves once it is killed. */
  cut(): Promise<void>;
}

interface Transport {
  readonly name: 'redis' | 'postgres';
  open(namespace: string): Promise<Replica>;
  /** Starts what announces the control plane's NOTIFY on this bus (the relay on Redis; Postgres carries it itself). */
  announce(bus: ReplicaBus, topic: string): Promise<void>;
}

const transports: Transport[] = [
  {
    name: 'redis',
    async open(namespace) {
      const connection = openRedisConnection({ url: redisUrl(), commandTimeoutMs: 1000 });
      closers.push(() => connection.close());
      const bus = createRedisReplicaBus(connection);
      closers.push(() => bus.close());
      expect(await bus.ready(5000)).toBe(true);
      const cache = createGatewayCache({ redis: connection, bus, key: secret, namespace });
      closers.push(() => cache.close());
      return {
        bus,
        cache,
        async cut() {
          const lines = String(await redis.client('LIST')).split('\n');
          const line = lines.find((entry) => entry.includes(` name=${connection.subscriberName} `));
          await redis.client('KILL', 'ID', /^id=(\d+) /.exec(line ?? '')?.[1] ?? 'none');
        },
      };
    },
    async announce(bus, topic) {
      const stop = await startControlPlaneRelay({ db, bus, topic, logger: silentLogger });
      closers.push(stop);
    },
  },
  {
    name: 'postgres',
    async open(namespace) {
      const bus = await openPostgresReplicaBus({
        url: controlDb.url,
        db,
        channelTopics: { [CONTROL_PLANE_CHANNEL]: revisionsTopic(namespace) },
        heartbeatMs: 500,
      });
      closers.push(() => bus.close());
      // Without Redis each replica caches in process; invalidations cross on the bus.
      const cache = createGatewayCache({ bus, key: secret, namespace });
      closers.push(() => cache.close());
      return {
        bus,
        cache,
        async cut() {
          const ended = await db.query<{ ended: boolean }>(
            'SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE application_name = $1',
            [bus.listenerName],
          );
          expect(ended.rows.map((row) => row.ended)).toEqual([true]);
        },
      };
    },
    async announce() {
      // The control plane's channel is one of the bus's own (channelTopics).
    },
  },
];

/** A backend whose listing names its version; `calls` counts what reached it. */
function versionedSource(id: string) {
  const state = { version: 1, calls: 0 };
  const source: Source = {
    id,
    kind: 'versioned',
    ttlMs: DEFAULT_SOURCE_TTL_MS,
    async listResources() {
      return { items: [], nextPosition: undefined };
    },
    async listTemplates() {
      state.calls += 1;
      return [{ uriTemplate: `test://${id}/{n}`, name: `${id} v${state.version}` }];
    },
    owns: (uri) => uri.startsWith(`test://${id}/`),
    read: async (uri) => [{ uri, text: uri }],
    health: async () => ({ ok: true }),
    close: async () => undefined,
  };
  return { source, state };
}

/** The control plane as the sync reads it, counting the comparisons of every revision (its resyncs) and the tenants read. */
function countingStore() {
  const counts = { comparisons: 0, reads: [] as string[] };
  const counted: ControlPlaneStore = {
    ...store,
    revisions: async () => {
      counts.comparisons += 1;
      return store.revisions();
    },
    getTenant: async (id) => {
      counts.reads.push(id);
      return store.getTenant(id);
    },
  };
  return { counted, counts };
}

describe.each(transports)('the replica bus over $name', (transport) => {
  const namespace = testNamespace(`bus_${transport.name}`);
  const topic = revisionsTopic(namespace);
  let a: Replica;
  let b: Replica;
  let eventsA: ReplicaTenantEventBus;
  let eventsB: ReplicaTenantEventBus;
  let syncB: TenantSync;
  const onB = collectEvents<TenantEvent>();
  const { counted, counts } = countingStore();
  const backend = versionedSource('docs');

  beforeAll(async () => {
    [a, b] = [await transport.open(namespace), await transport.open(namespace)];
    await transport.announce(a.bus, topic);
    [eventsA, eventsB] = [a, b].map((replica) =>
      createReplicaTenantEventBus({ bus: replica.bus, leases: createLocalLeases(), namespace, logger: silentLogger }),
    ) as [ReplicaTenantEventBus, ReplicaTenantEventBus];
    closers.push(
      () => eventsA.close(),
      () => eventsB.close(),
    );
    eventsB.subscribe('acme', onB.listener);
    syncB = await startTenantSync({
      bus: b.bus,
      topic,
      store: counted,
      registry: createTenantRegistry(),
      sourceFactories: new Map(),
      validate: async () => {
        throw new Error('the control plane holds no tenant');
      },
      build: async () => {
        throw new Error('the control plane holds no tenant');
      },
      invalidate: async () => undefined,
      logger: silentLogger,
    });
    closers.push(() => syncB.stop());
    if (transport.name === 'redis') {
      await within(5000, async () => {
        const [, subscribers] = (await redis.pubsub('NUMSUB', `${namespace}:events:acme`)) as [string, number];
        expect(subscribers).toBe(1);
      });
    }
  }, 30_000);

  afterAll(async () => {
    if (transport.name === 'redis') await deleteNamespace(namespace);
  });

  const onA = () => createCachingSource(backend.source, { tenantId: 'acme', cache: a.cache });
  const onBCache = () => createCachingSource(backend.source, { tenantId: 'acme', cache: b.cache });

  it('carries a configuration revision: the control plane’s NOTIFY at commit reaches the other replica’s sync', async () => {
    expect(counts.comparisons).toBe(1);
    await db.query('SELECT pg_notify($1, $2)', [CONTROL_PLANE_CHANNEL, 'acme']);
    await within(5000, () => expect(counts.reads).toContain('acme'), 'replica B read tenant acme');
    // A message on the topic from replica A reaches B's sync too.
    await a.bus.publish(topic, 'globex');
    await within(5000, () => expect(counts.reads).toContain('globex'), 'replica B read tenant globex');
  });

  it('carries a cache invalidation: replica B drops what it cached once replica A invalidates', async () => {
    await onA().listTemplates();
    expect((await onBCache().listTemplates())[0]?.name).toBe('docs v1');
    backend.state.version = 2;
    // Still cached on B.
    expect((await onBCache().listTemplates())[0]?.name).toBe('docs v1');
    await a.cache.invalidateTenant('acme');
    await within(
      5000,
      async () => expect((await onBCache().listTemplates())[0]?.name).toBe('docs v2'),
      'replica B serving v2',
    );
  });

  it('carries a source change to replica B’s listeners', async () => {
    const change: TenantEvent = {
      type: 'source',
      tenantId: 'acme',
      sourceId: 'docs',
      change: { type: 'resource-updated', uri: 'test://docs/1' },
    };
    eventsA.publish(change);
    expect(await onB.next((event) => event.type === 'source')).toEqual(change);
  });

  it('splits a source change into messages the transport carries', async () => {
    const uris = Array.from({ length: 200 }, (_, i) => `test://docs/${String(i).padStart(4, '0')}/${'x'.repeat(180)}`);
    const from = onB.events.length;
    eventsA.publish({ type: 'source', tenantId: 'acme', sourceId: 'docs', change: { type: 'list-changed', uris } });
    await within(5000, () =>
      expect(
        onB.events
          .slice(from)
          .flatMap((event) => (event.type === 'source' && 'uris' in event.change ? event.change.uris : [])),
      ).toEqual(uris),
    );
    expect(eventsA.stats().publishFailed).toBe(0);
  });

  it('after a gap on B’s connection, makes every consumer of B resync once', async () => {
    await onBCache().listTemplates();
    const [comparisons, from] = [counts.comparisons, onB.events.length];
    await b.cut();
    backend.state.version = 3;
    await a.cache.invalidateTenant('acme');

    // The sync compares every revision, listeners are told stale, the cache reads again.
    await within(10_000, () => expect(counts.comparisons).toBe(comparisons + 1), 'the sync compared once');
    await onB.next((event) => event.type === 'stale', 10_000, from);
    await within(
      10_000,
      async () => expect((await onBCache().listTemplates())[0]?.name).toBe('docs v3'),
      'replica B serving v3',
    );
    // Once: a marker sent after the gap arrives, and nothing more was resynced.
    eventsA.publish({ type: 'configuration', tenantId: 'acme' });
    await onB.next((event) => event.type === 'configuration', 5000, from);
    expect(counts.comparisons).toBe(comparisons + 1);
    expect(onB.events.slice(from).filter((event) => event.type === 'stale')).toHaveLength(1);
  });
});

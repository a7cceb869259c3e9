import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCacheKeys } from '../src/cache-keys.js';
import { createCachingResourceService } from '../src/caching-resource-service.js';
import type { CacheStore } from '../src/cache-store.js';
import type { RedisConnection } from '../src/redis-connection.js';
import type { GatewayCache } from '../src/gateway-cache.js';
import { createGatewayCacheOn } from '../src/gateway-cache.js';
import { createMemoryStore } from '../src/memory-store.js';
import { openRedisConnection } from '../src/redis-connection.js';
import { createRedisReplicaBus } from '../src/redis-replica-bus.js';
import { createRedisStore } from '../src/redis-store.js';
import { deleteNamespace, redisUrl, requireRedis, testNamespace } from '@mcpgw/test-helpers/redis';
import { within } from '@mcpgw/test-helpers/within';
import { fakeService } from './fake-service.js';

// Cached results are bound to the configuration revision they were computed
// under: two replicas (two cache engines over one store: the in-process store
// shared, or real Redis) where one has moved to a newer revision. The other's
// old runtime can neither read nor write entries, is told of the newer
// revision, and a tenant's deletion leaves no key of it in the store.

const signal = new AbortController().signal;
const namespace = testNamespace('revisions');

beforeAll(async () => {
  await requireRedis();
});
afterAll(async () => {
  await deleteNamespace(namespace);
});

describe.each(['memory', 'redis'] as const)('revision floor (%s store)', (kind) => {
  const secret = randomBytes(32);
  const keys = createCacheKeys({ key: secret, namespace });
  const stores: CacheStore[] = [];
  const connections: RedisConnection[] = [];
  let shared: CacheStore;
  let replicaA: GatewayCache;
  let replicaB: GatewayCache;
  beforeAll(async () => {
    const open = () => (kind === 'memory' ? shared : createRedisStore({ url: redisUrl(), commandTimeoutMs: 1000 }));
    shared = kind === 'memory' ? createMemoryStore() : createRedisStore({ url: redisUrl(), commandTimeoutMs: 1000 });
    stores.push(shared);
    // Each replica's announcements travel on a bus of its own over the real Redis (its echo marked as its own).
    const bus = () => {
      const connection = openRedisConnection({ url: redisUrl(), commandTimeoutMs: 1000 });
      connections.push(connection);
      return createRedisReplicaBus(connection);
    };
    const [busA, busB] = [bus(), bus()];
    expect(await busA.ready(3000)).toBe(true);
    expect(await busB.ready(3000)).toBe(true);
    replicaA = createGatewayCacheOn(open(), keys, busA);
    const storeB = open();
    if (storeB !== shared) stores.push(storeB);
    replicaB = createGatewayCacheOn(storeB, keys, busB);
    expect(await replicaA.ready(3000)).toBe(true);
    expect(await replicaB.ready(3000)).toBe(true);
  });
  afterAll(async () => {
    await replicaA?.close();
    await replicaB?.close();
    await Promise.all(connections.map((connection) => connection.close()));
  });

  const serviceOn = (cache: GatewayCache, tenantId: string, revision: number, label: string) => {
    const inner = fakeService(label);
    return { inner, service: createCachingResourceService(inner, { tenantId, revision, fingerprint: 'fp', cache }) };
  };

  it('keeps a stale replica from reading or writing entries once a newer revision is noted anywhere', async () => {
    const tenant = `t-${kind}-stale`;
    const told: [string, number][] = [];
    const stop = replicaB.onNewerRevision((tenantId, revision) => told.push([tenantId, revision]));
    await replicaA.noteRevision(tenant, 1);
    const oldOnB = serviceOn(replicaB, tenant, 1, 'old');
    await oldOnB.service.listResources(undefined, signal);
    await oldOnB.service.listResources(undefined, signal);
    expect(oldOnB.inner.calls.list).toBe(1);

    // Replica A starts applying revision 2; replica B has not heard of it.
    await replicaA.noteRevision(tenant, 2);
    const newOnA = serviceOn(replicaA, tenant, 2, 'new');
    // B hears of it through the store (at once by pub/sub, or when its copy expires), and is told.
    await within(
      10_000,
      async () => {
        await oldOnB.service.listResources(undefined, signal);
        expect(told).toContainEqual([tenant, 2]);
      },
      'B told of revision 2',
    );
    const calls = oldOnB.inner.calls.list;
    const bypassed = replicaB.metrics()[tenant]?.result?.bypasses ?? 0;
    const fromB = await oldOnB.service.listResources(undefined, signal);
    expect(fromB.resources[0]?.name).toBe(`old call ${calls + 1}`);
    expect(replicaB.metrics()[tenant]?.result?.bypasses).toBe(bypassed + 1);
    // What B answered was not stored: A fetches its own.
    const fromA = await newOnA.service.listResources(undefined, signal);
    expect(fromA.resources[0]?.name).toBe('new call 1');
    stop();
  });

  it('keys entries by revision: runtimes of two revisions never share one', async () => {
    const tenant = `t-${kind}-keys`;
    const first = serviceOn(replicaA, tenant, 7, 'seven');
    await first.service.read('test://a', signal);
    const second = serviceOn(replicaA, tenant, 8, 'eight');
    await second.service.read('test://a', signal);
    expect(second.inner.calls.read).toBe(1);
  });

  it('deletes every key of a deleted tenant, refuses its old runtimes, and serves it again when created anew', async () => {
    const tenant = `t-${kind}-deleted`;
    const other = `t-${kind}-kept`;
    await replicaA.noteRevision(tenant, 3);
    const served = serviceOn(replicaA, tenant, 3, 'gone');
    await served.service.listResources(undefined, signal);
    const kept = serviceOn(replicaA, other, 1, 'kept');
    await kept.service.listResources(undefined, signal);
    expect(await shared.deleteByPrefix(`${keys.tenantPrefix(tenant)}nothing-here`)).toBe(0);

    expect(await replicaB.dropTenant(tenant, 3)).toBeGreaterThan(0);
    expect(await shared.getMany([keys.generation(tenant), keys.revisionFloor(tenant)])).toEqual([undefined, undefined]);
    // A request still finishing on the old runtime of this replica neither reads nor stores anything.
    const late = serviceOn(replicaB, tenant, 3, 'late');
    await late.service.listResources(undefined, signal);
    expect(await shared.deleteByPrefix(keys.tenantPrefix(tenant))).toBe(0);
    // The other tenant's entries stay.
    await kept.service.listResources(undefined, signal);
    expect(kept.inner.calls.list).toBe(1);
    // Created again, at a higher revision: cached as before.
    await replicaB.noteRevision(tenant, 5);
    const again = serviceOn(replicaB, tenant, 5, 'again');
    await again.service.listResources(undefined, signal);
    await again.service.listResources(undefined, signal);
    expect(again.inner.calls.list).toBe(1);
  });
});

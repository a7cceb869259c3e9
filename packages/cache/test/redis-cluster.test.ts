import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { within } from '@mcpgw/test-helpers/within';
import type { GatewayCache } from '../src/gateway-cache.js';
import { createCacheKeys } from '../src/cache-keys.js';
import { createCachingResourceService } from '../src/caching-resource-service.js';
import { createCachingSource } from '../src/caching-source.js';
import { createGatewayCache } from '../src/gateway-cache.js';
import { type OwnRedisCluster, inspector, startRedisCluster } from '@mcpgw/test-helpers/redis';
import { countingSource } from './counting-source.js';
import { fakeService } from './fake-service.js';

// The same cache on Redis Cluster (REDIS_URL=redis+cluster://...).
// Three masters started by the test. All of a tenant's keys share a hash tag,
// so the entry + lock MGET of the cross-replica single flight is legal, and
// different tenants spread over the slots.

const secret = randomBytes(32);
const signal = new AbortController().signal;
let cluster: OwnRedisCluster;
const opened: GatewayCache[] = [];

// A generous Redis command deadline: on a busy test machine the 50 ms default times
// out commands on a live Redis (a late event loop runs the timer before it reads
// the reply), and a timed-out lookup is a miss these counts would see.
async function replica(): Promise<GatewayCache> {
  const cache = createGatewayCache({
    key: secret,
    redisUrl: cluster.url,
    commandTimeoutMs: 1000,
    // The replica without the lock waits for the other for as long as the test needs, not 500 ms.
    lockWaitMs: 10_000,
  });
  opened.push(cache);
  expect(await cache.ready(5000)).toBe(true);
  return cache;
}

beforeAll(async () => {
  cluster = await startRedisCluster();
}, 40_000);
afterAll(async () => {
  await Promise.all(opened.map((cache) => cache.close()));
  await cluster?.close();
});

describe('Redis Cluster', () => {
  it('caches results, collapses misses across two replicas and invalidates on both', async () => {
    const [a, b] = [await replica(), await replica()];
    const inner = fakeService('cluster');
    const view = createCachingResourceService(inner, { tenantId: 'acme', fingerprint: 'f', cache: a });
    await view.listResources(undefined, signal);
    await view.listResources(undefined, signal);
    expect(inner.calls.list).toBe(1);

    let answer!: () => void;
    const backend = countingSource('docs', new Promise<void>((resolve) => (answer = resolve)));
    const onA = createCachingSource(backend, { tenantId: 'acme', cache: a });
    const onB = createCachingSource(backend, { tenantId: 'acme', cache: b });
    const asked = Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? onA : onB).listResources({ limit: 2 })));
    // The backend answers only once all 10 have missed: they are concurrent, whatever the machine's speed.
    const misses = () => (a.metrics().acme?.source.misses ?? 0) + (b.metrics().acme?.source.misses ?? 0);
    await within(10_000, () => expect(misses()).toBe(10), 'ten misses');
    answer();
    await asked;
    expect(backend.calls.list).toBe(1);
    expect(a.metrics().acme?.source.errors).toBe(0);
    expect(b.metrics().acme?.source.errors).toBe(0);

    backend.version = 2;
    await a.invalidateTenant('acme');
    // B never re-reads a generation on its own (only after a gap): only the invalidation message can have told it.
    await within(
      10_000,
      async () => expect((await onB.listResources({ limit: 2 })).items[0]?.name).toBe('docs 0 v2'),
      'the new name on B',
    );
  });

  it('puts every key of a tenant in one slot, and spreads tenants over the masters', async () => {
    const keys = createCacheKeys({ key: secret });
    const client = inspector(`redis://127.0.0.1:${cluster.ports[0]}`);
    await client.connect();
    try {
      const slotOf = (key: string) => client.cluster('KEYSLOT', key);
      const entry = keys.entry({
        layer: 'result',
        tenantId: 'acme',
        generation: 'g',
        revision: 1,
        who: 'f',
        method: 'm',
        params: 1,
      });
      const slot = await slotOf(entry);
      expect(await slotOf(keys.lock(entry))).toBe(slot);
      expect(await slotOf(keys.generation('acme'))).toBe(slot);
      const slots = await Promise.all(Array.from({ length: 50 }, (_, i) => slotOf(keys.generation(`tenant-${i}`))));
      // 50 tenants over 16,384 slots: nearly every one gets a slot of its own.
      expect(new Set(slots).size).toBeGreaterThan(40);
    } finally {
      client.disconnect();
    }
  });
});

import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { createInProcessReplicaBus } from '@mcpgw/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFreezingProxy } from '@mcpgw/test-helpers/freezing-proxy';
import { deleteNamespace, inspector, redisUrl, requireRedis, testNamespace } from '@mcpgw/test-helpers/redis';
import { createCachingSource } from '../src/caching-source.js';
import type { GatewayCache } from '../src/gateway-cache.js';
import { createGatewayCache } from '../src/gateway-cache.js';
import { createCacheKeys } from '../src/cache-keys.js';
import { createMemoryStore } from '../src/memory-store.js';
import type { RedisConnection } from '../src/redis-connection.js';
import { openRedisConnection } from '../src/redis-connection.js';
import { countingSource } from './counting-source.js';
import { TenantGenerations } from '../src/tenant-generations.js';
import { within } from '@mcpgw/test-helpers/within';

// The one resync rule (docs/adr/0010-one-replica-bus.md): a replica whose
// subscriber connection dropped re-reads what it holds from the source of
// truth once the subscription holds again, so an invalidation published
// while it was away is not missed. Two caches with the same secret on the
// same Redis stand for two replicas; B never re-reads a generation on its
// own, so only the resync can tell it.

const secret = randomBytes(32);
const namespace = testNamespace('resync');
const closers: (() => Promise<unknown>)[] = [];
let redis: Redis;

beforeAll(async () => {
  await requireRedis();
  redis = inspector();
  await redis.connect();
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(async () => {
  redis?.disconnect();
  await deleteNamespace(namespace);
});

async function replica(connection?: RedisConnection): Promise<GatewayCache> {
  const cache = createGatewayCache({
    key: secret,
    namespace,
    ...(connection === undefined ? { redisUrl: redisUrl(), commandTimeoutMs: 1000 } : { redis: connection }),
  });
  closers.push(() => cache.close());
  expect(await cache.ready(3000)).toBe(true);
  return cache;
}

/** The id of the one connection named `name` (CLIENT LIST), to kill it alone. */
async function clientId(name: string): Promise<string> {
  const lines = String(await redis.client('LIST')).split('\n');
  const ids = lines.filter((line) => line.includes(` name=${name} `)).map((line) => /^id=(\d+) /.exec(line)?.[1]);
  expect(ids).toHaveLength(1);
  return ids[0]!;
}

describe('the resync after a gap', () => {
  it('re-reads the generation after its subscriber connection dropped, so an invalidation sent meanwhile is not missed', async () => {
    const connection = openRedisConnection({ url: redisUrl(), commandTimeoutMs: 1000 });
    closers.push(() => connection.close());
    const resyncs: boolean[] = [];
    connection.onResync((gap) => resyncs.push(gap));
    const [a, b] = [await replica(), await replica(connection)];
    const backend = countingSource('docs');
    const onA = createCachingSource(backend, { tenantId: 'acme', cache: a });
    const onB = createCachingSource({ ...backend, watch: undefined }, { tenantId: 'acme', cache: b });
    await onA.listTemplates();
    expect((await onB.listTemplates())[0]?.name).toBe('docs v1');
    const channel = `${namespace}:invalidate`;
    await within(5000, async () => expect(await redis.pubsub('NUMSUB', channel)).toEqual([channel, 2]));

    await redis.client('KILL', 'ID', await clientId(connection.subscriberName));
    backend.version = 2;
    // Sent while B's subscription is gone: only A (its own echo) hears it.
    const [, listening] = (await redis.pubsub('NUMSUB', channel)) as [string, number];
    await a.invalidateTenant('acme');
    const [, stillListening] = (await redis.pubsub('NUMSUB', channel)) as [string, number];
    expect([listening, stillListening]).toEqual([1, 1]);

    await within(5000, () => expect(resyncs).toContain(true), 'a resync after the gap');
    expect((await onB.listTemplates())[0]?.name).toBe('docs v2');
  });

  it('notices a subscription gone silent without dropping (its heartbeats stop arriving), reconnects it and re-reads', async () => {
    const proxy = await startFreezingProxy(redisUrl(), 6379);
    closers.push(() => proxy.close());
    const connection = openRedisConnection({ url: proxy.url, commandTimeoutMs: 1000, heartbeatMs: 100 });
    closers.push(() => connection.close());
    const resyncs: boolean[] = [];
    connection.onResync((gap) => resyncs.push(gap));
    const [a, b] = [await replica(), await replica(connection)];
    const backend = countingSource('docs');
    const onA = createCachingSource(backend, { tenantId: 'globex', cache: a });
    const onB = createCachingSource({ ...backend, watch: undefined }, { tenantId: 'globex', cache: b });
    await onA.listTemplates();
    expect((await onB.listTemplates())[0]?.name).toBe('docs v1');
    const channel = `${namespace}:invalidate`;
    await within(5000, async () => expect(await redis.pubsub('NUMSUB', channel)).toEqual([channel, 2]));

    // B's subscriber connection stays open, but nothing Redis sends on it arrives any more (half-open).
    proxy.freeze(/subscribe/i);
    backend.version = 2;
    await a.invalidateTenant('globex');
    expect((await onB.listTemplates())[0]?.name).toBe('docs v1');

    await within(5000, () => expect(resyncs).toContain(true), 'a resync after the gap');
    expect((await onB.listTemplates())[0]?.name).toBe('docs v2');
  });
});

describe('an announcement that could not be published', () => {
  it('is owed and published again until it goes out', async () => {
    const store = createMemoryStore();
    const keys = createCacheKeys({ key: secret });
    const bus = createInProcessReplicaBus();
    let failures = 1;
    const flaky = {
      ...bus,
      publish: async (topic: string, message: string) => {
        if (failures-- > 0) throw new Error('Redis did not answer');
        await bus.publish(topic, message);
      },
    };
    const heard: string[] = [];
    bus.subscribe(keys.invalidationChannel, (tag) => heard.push(tag));
    const generations = new TenantGenerations(store, keys, flaky, { retryMs: 10 });
    closers.push(async () => generations.close());
    await expect(generations.invalidate('acme')).rejects.toThrow('Redis did not answer');
    expect(heard).toEqual([]);
    await within(5000, () => expect(heard).toEqual([keys.tenantTag('acme')]));
  });
});

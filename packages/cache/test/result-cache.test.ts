import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayCache } from '../src/gateway-cache.js';
import { type AccessScope, unrestrictedScope } from '@mcpgw/core';
import { createCachingResourceService, withResultCache } from '../src/caching-resource-service.js';
import { createGatewayCache } from '../src/gateway-cache.js';
import { deleteNamespace, inspector, redisUrl, requireRedis, testNamespace } from '@mcpgw/test-helpers/redis';
import { within } from '@mcpgw/test-helpers/within';
import { fakeService } from './fake-service.js';

// The per-credential result cache, against both stores: the in-process
// LRU (REDIS_URL unset) and real Redis.

const signal = new AbortController().signal;
const namespace = testNamespace('results');
let clock = Date.now();

beforeAll(async () => {
  await requireRedis();
});
afterAll(async () => {
  await deleteNamespace(namespace);
});

// A generous Redis command deadline: on a busy test machine the 50 ms default times
// out commands on a live Redis (a late event loop runs the timer before it reads
// the reply), and a timed-out lookup is a miss these counts would see.
const COMMAND_TIMEOUT_MS = 1000;

describe.each(['memory', 'redis'] as const)('result cache (%s store)', (kind) => {
  let cache: GatewayCache;
  beforeAll(async () => {
    cache = createGatewayCache({
      key: randomBytes(32),
      namespace,
      ...(kind === 'redis' ? { redisUrl: redisUrl(), commandTimeoutMs: COMMAND_TIMEOUT_MS } : { now: () => clock }),
    });
    expect(await cache.ready(3000)).toBe(true);
  });
  afterAll(async () => {
    await cache?.close();
  });
  const caller = (tenantId: string, fingerprint: string, label = `${tenantId}-${fingerprint}`) => {
    const inner = fakeService(label);
    return { inner, service: createCachingResourceService(inner, { tenantId, fingerprint, cache }) };
  };

  it('misses, then hits with the same page; another cursor is another entry', async () => {
    const { inner, service } = caller(`t-${kind}-1`, 'fp');
    const first = await service.listResources(undefined, signal);
    const second = await service.listResources(undefined, signal);
    expect(second.resources).toEqual(first.resources);
    expect(second.nextCursor).toBe('page-2');
    expect(inner.calls.list).toBe(1);
    await service.listResources('page-2', signal);
    expect(inner.calls.list).toBe(2);
    await service.listTemplates(undefined, signal);
    await service.listTemplates(undefined, signal);
    expect(inner.calls.templates).toBe(1);
    const read = await service.read('test://a', signal);
    expect((await service.read('test://a', signal))?.contents).toEqual(read?.contents);
    expect(inner.calls.read).toBe(1);
    expect(cache.metrics()[`t-${kind}-1`]?.result).toEqual({ hits: 3, misses: 4, errors: 0, bypasses: 0 });
  });

  it('never stores ttlMs 0, "not found", errors, or requests that must not be cached', async () => {
    const { inner, service } = caller(`t-${kind}-2`, 'fp');
    inner.ttlMs = 0;
    await service.listResources(undefined, signal);
    await service.listResources(undefined, signal);
    expect(inner.calls.list).toBe(2);
    inner.ttlMs = 60_000;
    expect(await service.read(inner.missing, signal)).toBeUndefined();
    expect(await service.read(inner.missing, signal)).toBeUndefined();
    expect(inner.calls.read).toBe(2);
    inner.failure = new Error('backend down');
    await expect(service.read('test://x', signal)).rejects.toThrow('backend down');
    inner.failure = undefined;
    await service.read('test://x', signal);
    expect(inner.calls.read).toBe(4);
    // An MRTR retry (inputResponses / requestState) neither reads nor writes the cache.
    await service.read('test://y', signal, { cacheable: false });
    await service.read('test://y', signal);
    await service.read('test://y', signal, { cacheable: false });
    expect(inner.calls.read).toBe(7);
    expect(cache.metrics()[`t-${kind}-2`]?.result.bypasses).toBe(2);
  });

  it('keeps principals and tenants apart; the same fingerprint (a refreshed token) hits', async () => {
    const alice = caller(`t-${kind}-3`, 'alice');
    const bob = caller(`t-${kind}-3`, 'bob');
    const aliceElsewhere = caller(`t-${kind}-4`, 'alice');
    const aliceAgain = caller(`t-${kind}-3`, 'alice', 'unused');
    const a = await alice.service.listResources(undefined, signal);
    const b = await bob.service.listResources(undefined, signal);
    const c = await aliceElsewhere.service.listResources(undefined, signal);
    expect(a.resources[0]?.name).toBe(`t-${kind}-3-alice call 1`);
    expect(b.resources[0]?.name).toBe(`t-${kind}-3-bob call 1`);
    expect(c.resources[0]?.name).toBe(`t-${kind}-4-alice call 1`);
    const again = await aliceAgain.service.listResources(undefined, signal);
    expect(again.resources).toEqual(a.resources);
    expect(aliceAgain.inner.calls.list).toBe(0);
  });
});

describe('expiry honours ttlMs', () => {
  it('in process: fresh until ttlMs (reporting the freshness left), then fetched again (fake clock, 60 s)', async () => {
    const cache = createGatewayCache({ key: randomBytes(32), now: () => clock });
    const inner = fakeService('clock');
    const service = createCachingResourceService(inner, { tenantId: 't', fingerprint: 'f', cache });
    await service.listResources(undefined, signal);
    clock += 45_000;
    const cached = await service.listResources(undefined, signal);
    expect(cached.ttlMs).toBe(15_000);
    expect(inner.calls.list).toBe(1);
    clock += 15_000;
    const fresh = await service.listResources(undefined, signal);
    expect(inner.calls.list).toBe(2);
    expect(fresh.ttlMs).toBe(60_000);
    await cache.close();
  });

  it('in Redis: the entry is stored for ttlMs and goes when Redis expires it', async () => {
    const own = testNamespace('results-ttl');
    const cache = createGatewayCache({
      key: randomBytes(32),
      namespace: own,
      redisUrl: redisUrl(),
      commandTimeoutMs: COMMAND_TIMEOUT_MS,
    });
    const redis = inspector();
    await redis.connect();
    try {
      expect(await cache.ready(3000)).toBe(true);
      // Redis expires the entry on its own clock: the test reads the expiry it was given, then
      // waits for the entry to go (the next read misses), however long the machine takes.
      const inner = fakeService('short', 2_000);
      const service = createCachingResourceService(inner, { tenantId: 't', fingerprint: 'f', cache });
      await service.read('test://r', signal);
      // The entry and its body (the tenant's generation key, `:g`, lives on).
      const stored = (await redis.keys(`${own}:*`)).filter((key) => !key.endsWith(':g'));
      expect(stored).toHaveLength(2);
      for (const key of stored) {
        // At most ttlMs left (-1 would be no expiry, -2 an entry already gone).
        const left = await redis.pttl(key);
        expect(left).toBeGreaterThan(0);
        expect(left).toBeLessThanOrEqual(2_000);
      }
      await service.read('test://r', signal);
      expect(inner.calls.read).toBe(1);
      await within(
        10_000,
        async () => {
          await service.read('test://r', signal);
          expect(inner.calls.read).toBe(2);
        },
        'a read after the entry expired',
      );
    } finally {
      redis.disconnect();
      await cache.close();
      await deleteNamespace(own);
    }
  });
});

describe('withResultCache', () => {
  it('does not even look up results no source of the tenant lets anyone cache', async () => {
    const cache = createGatewayCache({ key: randomBytes(32) });
    const inner = fakeService('zero', 0);
    const catalog = withResultCache(
      { tenantId: 'zero', sources: [{ ttlMs: { list: 0, read: 30_000 } }], forScope: (_scope: AccessScope) => inner },
      cache,
    );
    const view = catalog.forScope(unrestrictedScope);
    await view.listResources(undefined, signal);
    inner.ttlMs = 30_000;
    await view.read('test://a', signal);
    await view.read('test://a', signal);
    expect(inner.calls.read).toBe(1);
    expect(cache.metrics().zero?.result).toEqual({ hits: 1, misses: 1, errors: 0, bypasses: 1 });
    await cache.close();
  });

  it("builds a caller's view once per scope, and never answers one scope from another's view", async () => {
    const cache = createGatewayCache({ key: randomBytes(32) });
    const inners = new Map<string, ReturnType<typeof fakeService>>();
    const catalog = withResultCache(
      {
        tenantId: 'views',
        sources: [{ ttlMs: { list: 30_000, read: 30_000 } }],
        forScope: (scope: AccessScope) => {
          const inner = fakeService(scope.fingerprint);
          inners.set(scope.fingerprint, inner);
          return inner;
        },
      },
      cache,
    );
    const alice: AccessScope = { ...unrestrictedScope, fingerprint: 'alice' };
    const bob: AccessScope = { ...unrestrictedScope, fingerprint: 'bob' };
    const aliceView = catalog.forScope(alice);
    expect(catalog.forScope(alice)).toBe(aliceView);
    expect(inners.size).toBe(1);
    const bobView = catalog.forScope(bob);
    expect(bobView).not.toBe(aliceView);
    const aliceFirst = await aliceView.listResources(undefined, signal);
    const bobFirst = await catalog.forScope(bob).listResources(undefined, signal);
    expect(aliceFirst.resources[0]?.uri).toBe('test://alice/first/1');
    expect(bobFirst.resources[0]?.uri).toBe('test://bob/first/1');
    // The reused view still answers from the cache: alice's second listing is her first one.
    const aliceAgain = await catalog.forScope(alice).listResources(undefined, signal);
    expect(aliceAgain.resources[0]?.uri).toBe('test://alice/first/1');
    expect(inners.get('alice')?.calls.list).toBe(1);
    // Kept for a bounded number of callers: after several hundred others, alice's view is built again.
    for (let n = 0; n < 600; n += 1) catalog.forScope({ ...unrestrictedScope, fingerprint: `other-${n}` });
    expect(catalog.forScope(alice)).not.toBe(aliceView);
    await cache.close();
  });
});

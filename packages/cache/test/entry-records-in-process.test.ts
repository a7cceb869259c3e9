import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCachingResourceService } from '../src/caching-resource-service.js';
import { createGatewayCache, type GatewayCache } from '../src/gateway-cache.js';
import { deleteNamespace, inspector, redisUrl, requireRedis, testNamespace } from '@mcpgw/test-helpers/redis';
import { within } from '@mcpgw/test-helpers/within';
import { fakeService } from './fake-service.js';

// A repeated hit is answered from the entry record this replica keeps, with no
// command to Redis, and still follows every invalidation and expiry exactly as
// one read from Redis would. Two replicas on one real Redis, watched by MONITOR.

const signal = new AbortController().signal;
const namespace = testNamespace('records');
const key = randomBytes(32);
let a: GatewayCache;
let b: GatewayCache;
let monitor: Redis;
/** Every command Redis received that names a key of this test's namespace. */
const commands: string[][] = [];

beforeAll(async () => {
  await requireRedis();
  a = createGatewayCache({ key, namespace, redisUrl: redisUrl(), commandTimeoutMs: 1000 });
  b = createGatewayCache({ key, namespace, redisUrl: redisUrl(), commandTimeoutMs: 1000 });
  expect(await a.ready(3000)).toBe(true);
  expect(await b.ready(3000)).toBe(true);
  monitor = await inspector().monitor();
  monitor.on('monitor', (_time: string, args: string[]) => {
    if (args.some((arg) => arg.includes(namespace))) commands.push(args);
  });
});
afterAll(async () => {
  monitor?.disconnect();
  await a?.close();
  await b?.close();
  await deleteNamespace(namespace);
});

/** Commands seen while `run` ran (MONITOR delivers them a little later: waits for a marker after them). */
async function commandsDuring(run: () => Promise<void>): Promise<string[][]> {
  const from = commands.length;
  await run();
  const marker = `${namespace}:marker:${randomBytes(4).toString('hex')}`;
  const probe = inspector();
  await probe.get(marker);
  probe.disconnect();
  await within(2000, async () => expect(commands.some((args) => args.includes(marker))).toBe(true), 'the marker');
  return commands.slice(from).filter((args) => !args.includes(marker));
}

const service = (cache: GatewayCache, tenantId: string, inner = fakeService(tenantId)) => ({
  inner,
  service: createCachingResourceService(inner, { tenantId, fingerprint: 'fp', cache }),
});

describe('entry records kept in process', () => {
  it('answers repeated hits without a command to Redis', async () => {
    const { inner, service: listing } = service(a, 'kept-1');
    const first = await listing.listResources(undefined, signal);
    await listing.listResources(undefined, signal);
    const seen = await commandsDuring(async () => {
      for (let i = 0; i < 20; i += 1)
        expect((await listing.listResources(undefined, signal)).resources).toEqual(first.resources);
    });
    expect(inner.calls.list).toBe(1);
    expect(seen).toEqual([]);
    expect(a.metrics()['kept-1']?.result.hits).toBe(21);
  });

  it('follows an invalidation made on another replica at once', async () => {
    const onA = service(a, 'kept-2');
    await onA.service.listResources(undefined, signal);
    await onA.service.listResources(undefined, signal);
    expect(onA.inner.calls.list).toBe(1);
    await b.invalidateTenant('kept-2');
    // The new generation reaches A over the replica bus (Redis pub/sub): from then on A misses.
    await within(
      2000,
      async () => {
        await onA.service.listResources(undefined, signal);
        expect(onA.inner.calls.list).toBe(2);
      },
      'a miss on A after B invalidated the tenant',
    );
  });

  it('ends a kept record when its ttlMs ends, as Redis ends the entry', async () => {
    const { inner, service: listing } = service(a, 'kept-3', fakeService('kept-3', 400));
    const fetchedAt = Date.now();
    await listing.listResources(undefined, signal);
    await listing.listResources(undefined, signal);
    expect(inner.calls.list).toBe(1);
    await within(
      2000,
      async () => {
        await listing.listResources(undefined, signal);
        expect(inner.calls.list).toBe(2);
      },
      'a miss once the entry ended',
    );
    // Not a moment before its ttlMs: every listing until then was a hit.
    expect(Date.now() - fetchedAt).toBeGreaterThanOrEqual(400);
  });

  it('keeps records per caller: another fingerprint of the same view still reads its own entry', async () => {
    const inner = fakeService('kept-4');
    const one = createCachingResourceService(inner, { tenantId: 'kept-4', fingerprint: 'one', cache: a });
    const other = createCachingResourceService(inner, { tenantId: 'kept-4', fingerprint: 'other', cache: a });
    await one.listResources(undefined, signal);
    await one.listResources(undefined, signal);
    const seen = await commandsDuring(async () => {
      await other.listResources(undefined, signal);
    });
    // No view given: the other caller shares nothing and goes to Redis (its own entry, not found) and the backend.
    expect(seen.some((args) => args[0]?.toLowerCase() === 'get')).toBe(true);
    expect(inner.calls.list).toBe(2);
  });
});

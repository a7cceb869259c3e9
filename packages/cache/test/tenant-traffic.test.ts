import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteNamespace, inspector, redisUrl, requireRedis, testNamespace } from '@mcpgw/test-helpers/redis';
import type { RedisConnection } from '../src/redis-connection.js';
import { openRedisConnection } from '../src/redis-connection.js';
import {
  LATENCY_BUCKETS_MS,
  TRAFFIC_MINUTES,
  TRAFFIC_TTL_SECONDS,
  createTenantTraffic,
  latencyQuantileMs,
} from '../src/tenant-traffic.js';

// The console's per-tenant traffic counters against a real Redis, with an
// injected clock: two replicas' counts sum in one hash per tenant-minute, each
// with a TTL a bit over the hour, and a Redis that refuses the batch never
// throws into the request that counted.

const START = Date.UTC(2026, 0, 1, 12, 0, 30);
const MINUTE = 60_000;

let namespace: string;
let connection: RedisConnection;
beforeAll(async () => {
  await requireRedis();
  namespace = testNamespace('traffic');
  connection = openRedisConnection({ url: redisUrl(), commandTimeoutMs: 1000 });
  expect(await connection.ready(3000)).toBe(true);
});
afterAll(async () => {
  await connection?.close();
  if (namespace !== undefined) await deleteNamespace(namespace);
});

describe('tenant traffic in Redis', () => {
  it("sums every replica's counts per tenant-minute, an hour at a time, oldest first", async () => {
    let now = START;
    const clock = () => now;
    const prefix = `${namespace}:a:`;
    const one = createTenantTraffic({ redis: connection, prefix, now: clock, flushMs: 60_000 });
    const two = createTenantTraffic({ redis: connection, prefix, now: clock, flushMs: 60_000 });
    one.recordRequest('acme', { error: false, latencyMs: 3 });
    two.recordRequest('acme', { error: true, latencyMs: 40 });
    two.recordCacheLookup('acme', true);
    one.recordCacheLookup('acme', false);
    one.recordRequest('other', { error: false, latencyMs: 1 });
    now += MINUTE;
    one.recordRequest('acme', { error: false, latencyMs: 20_000 });
    await Promise.all([one.flush(), two.flush()]);

    const hour = await two.lastHour('acme');
    expect(hour).toHaveLength(TRAFFIC_MINUTES);
    expect(hour.at(-1)?.at).toBe(Math.floor(now / MINUTE) * MINUTE);
    expect(hour[0]?.at).toBe(hour.at(-1)!.at - (TRAFFIC_MINUTES - 1) * MINUTE);
    const [previous, current] = hour.slice(-2);
    expect(previous).toMatchObject({ requests: 2, errors: 1, cacheHits: 1, cacheMisses: 1, latencyMsSum: 43 });
    expect(previous?.latencyBuckets[LATENCY_BUCKETS_MS.indexOf(5)]).toBe(1);
    expect(previous?.latencyBuckets[LATENCY_BUCKETS_MS.indexOf(50)]).toBe(1);
    expect(latencyQuantileMs(previous!, 0.5)).toBe(5);
    expect(latencyQuantileMs(previous!, 0.95)).toBe(50);
    expect(current).toMatchObject({ requests: 1, errors: 0 });
    expect(current?.latencyBuckets.at(-1)).toBe(1);
    expect(latencyQuantileMs(current!, 0.95)).toBeUndefined();
    expect(hour.slice(0, -2).every((minute) => minute.requests === 0)).toBe(true);
    expect((await one.lastHour('other')).at(-2)?.requests).toBe(1);

    // One hash per tenant-minute, kept a bit over the hour.
    const redis = inspector();
    await redis.connect();
    try {
      const keys = (await redis.keys(`${prefix}*`)).sort();
      expect(keys).toEqual(
        [
          `${prefix}{acme}:${previous!.at}`,
          `${prefix}{acme}:${current!.at}`,
          `${prefix}{other}:${previous!.at}`,
        ].sort(),
      );
      const ttl = await redis.ttl(keys[0]!);
      expect(ttl).toBeGreaterThan(TRAFFIC_MINUTES * 60);
      expect(ttl).toBeLessThanOrEqual(TRAFFIC_TTL_SECONDS);
    } finally {
      redis.disconnect();
    }

    // An hour later the old minutes are outside the window read.
    now += TRAFFIC_MINUTES * MINUTE;
    expect((await one.lastHour('acme')).every((minute) => minute.requests === 0)).toBe(true);
    await Promise.all([one.close(), two.close()]);
  });

  it('sends tallies on its own, off the request path, after flushMs', async () => {
    const prefix = `${namespace}:b:`;
    const traffic = createTenantTraffic({ redis: connection, prefix, flushMs: 10 });
    traffic.recordRequest('acme', { error: false, latencyMs: 1 });
    const redis = inspector();
    await redis.connect();
    try {
      await expect.poll(async () => (await redis.keys(`${prefix}*`)).length).toBe(1);
    } finally {
      redis.disconnect();
    }
    await traffic.close();
  });

  it('never throws into the counting request when Redis refuses the batch', async () => {
    const warnings: unknown[] = [];
    const logger = { warn: (fields: unknown) => warnings.push(fields) } as never;
    const closed = openRedisConnection({ url: redisUrl(), commandTimeoutMs: 100 });
    await closed.ready(3000);
    await closed.close();
    const traffic = createTenantTraffic({ redis: closed, prefix: `${namespace}:c:`, logger, flushMs: 60_000 });
    expect(() => traffic.recordRequest('acme', { error: false, latencyMs: 1 })).not.toThrow();
    await traffic.flush();
    expect(warnings).toHaveLength(1);
  });
});

describe('tenant traffic in process', () => {
  it('keeps the last hour per tenant and forgets older minutes', async () => {
    let now = START;
    const traffic = createTenantTraffic({ now: () => now });
    traffic.recordRequest('acme', { error: false, latencyMs: 7 });
    traffic.recordCacheLookup('acme', true);
    expect((await traffic.lastHour('acme')).at(-1)).toMatchObject({ requests: 1, cacheHits: 1, latencyMsSum: 7 });
    expect((await traffic.lastHour('other')).every((minute) => minute.requests === 0)).toBe(true);
    now += TRAFFIC_MINUTES * MINUTE;
    traffic.recordRequest('acme', { error: true, latencyMs: 1 });
    const hour = await traffic.lastHour('acme');
    expect(hour.reduce((sum, minute) => sum + minute.requests, 0)).toBe(1);
    expect(hour.at(-1)?.errors).toBe(1);
  });
});

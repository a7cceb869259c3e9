import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RateCounter } from '../src/index.js';
import { createMemoryRateCounter, createRedisRateCounter, withFallbackCounter } from '../src/index.js';
import { deleteNamespace, dumpNamespace, redisUrl, requireRedis, testNamespace } from '@mcpgw/test-helpers/redis';

// The counters behind the gateway's rate limits: fixed windows in
// process and in real Redis, and the fallback that keeps counting when Redis fails.

describe('memory rate counter', () => {
  it('counts within a window and starts again once it has passed', async () => {
    let now = 1_000;
    const counter = createMemoryRateCounter({ now: () => now });
    expect(await counter.increment('tenant:a', 60_000)).toEqual({ current: 1, ttlMs: 60_000 });
    now += 59_000;
    expect(await counter.increment('tenant:a', 60_000)).toEqual({ current: 2, ttlMs: 1_000 });
    expect(await counter.increment('tenant:b', 60_000)).toEqual({ current: 1, ttlMs: 60_000 });
    now += 1_000;
    expect(await counter.increment('tenant:a', 60_000)).toEqual({ current: 1, ttlMs: 60_000 });
  });

  it('keeps at most maxKeys windows, dropping the oldest', async () => {
    const counter = createMemoryRateCounter({ maxKeys: 2 });
    await counter.increment('a', 60_000);
    await counter.increment('a', 60_000);
    await counter.increment('b', 60_000);
    await counter.increment('c', 60_000);
    // 'a' was the oldest window: it was dropped and starts again.
    expect((await counter.increment('a', 60_000)).current).toBe(1);
  });
});

describe('Redis rate counter', () => {
  const namespace = testNamespace('rate-counter');
  let counter: ReturnType<typeof createRedisRateCounter>;

  beforeAll(async () => {
    await requireRedis();
    counter = createRedisRateCounter({ redis: { url: redisUrl(), commandTimeoutMs: 1000 }, prefix: `${namespace}:` });
    expect(await counter.ready(3000)).toBe(true);
  });
  afterAll(async () => {
    await counter?.close();
    await deleteNamespace(namespace);
  });

  it('counts atomically in one key per subject, which expires with its window', async () => {
    const counts = await Promise.all(Array.from({ length: 10 }, () => counter.increment('tenant:acme', 60_000)));
    expect(counts.map((count) => count.current).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    for (const count of counts) expect(count.ttlMs).toBeGreaterThan(0);
    for (const count of counts) expect(count.ttlMs).toBeLessThanOrEqual(60_000);
    expect((await dumpNamespace(namespace)).get(`${namespace}:tenant:acme`)).toBe('10');
  });

  it("forgets a deleted tenant's counters and its callers', and no other tenant's", async () => {
    for (const key of [
      'tenant:gone',
      'principal:gone:fp1',
      'principal:gone:fp2',
      'tenant:gone2',
      'principal:gone2:fp',
    ]) {
      await counter.increment(key, 60_000);
    }
    await counter.forget(['tenant:gone'], ['principal:gone:']);
    expect([...(await dumpNamespace(namespace)).keys()].filter((key) => key.includes('gone')).sort()).toEqual([
      `${namespace}:principal:gone2:fp`,
      `${namespace}:tenant:gone2`,
    ]);
  });
});

describe('fallback counter', () => {
  it('counts in the fallback whenever the primary fails, and reports the failure', async () => {
    let failing = true;
    const primary = createMemoryRateCounter();
    const flaky: RateCounter = {
      increment: (key, windowMs) =>
        failing ? Promise.reject(new Error('Stream is not writeable')) : primary.increment(key, windowMs),
      forget: (keys, prefixes) => primary.forget(keys, prefixes),
      close: () => primary.close(),
    };
    const fallback = createMemoryRateCounter();
    const failures: unknown[] = [];
    const counter = withFallbackCounter(flaky, fallback, (error) => failures.push(error));
    expect((await counter.increment('k', 60_000)).current).toBe(1);
    expect((await counter.increment('k', 60_000)).current).toBe(2);
    expect(failures).toHaveLength(2);
    failing = false;
    expect((await counter.increment('k', 60_000)).current).toBe(1);
    expect(failures).toHaveLength(2);
  });
});

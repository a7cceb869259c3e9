import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RateCounter } from '../src/index.js';
import { batchRateCounter, createMemoryRateCounter, createRedisRateCounter } from '../src/index.js';
import { deleteNamespace, dumpNamespace, redisUrl, requireRedis, testNamespace } from '@mcpgw/test-helpers/redis';

// The rate limits' Redis counts, sent in batches while a key is far below its limit.

/** A shared counter (another replica's view is its state) that records what it was sent. */
function recordingCounter(now: () => number) {
  const inner = createMemoryRateCounter({ now });
  const sent: number[] = [];
  const counter: RateCounter = {
    increment: (key, windowMs, by = 1) => {
      sent.push(by);
      return inner.increment(key, windowMs, by);
    },
    forget: (keys, prefixes) => inner.forget(keys, prefixes),
    close: () => inner.close(),
  };
  return { counter, sent };
}

describe('batched rate counter', () => {
  it('answers from its own tally below half the limit, and sends the counts in one increment', async () => {
    let now = 1_000;
    const { counter: shared, sent } = recordingCounter(() => now);
    const counter = batchRateCounter(shared, { now: () => now, flushMs: 60_000 });
    // The first count of a window is sent: it learns the shared count and the window's end.
    expect(await counter.increment('tenant:a', 60_000, 1, 1000)).toEqual({ current: 1, ttlMs: 60_000 });
    now += 1_000;
    for (let i = 2; i <= 10; i += 1) expect((await counter.increment('tenant:a', 60_000, 1, 1000)).current).toBe(i);
    expect(sent).toEqual([1]);
    await counter.flush();
    expect(sent).toEqual([1, 9]);
    // What the shared counter holds is the whole count.
    expect((await shared.increment('tenant:a', 60_000, 0)).current).toBe(10);
  });

  it("counts another replica's requests once it hears back, and sends every count at once from half the limit", async () => {
    const now = 1_000;
    const { counter: shared, sent } = recordingCounter(() => now);
    const counter = batchRateCounter(shared, { now: () => now, flushMs: 60_000 });
    await counter.increment('tenant:a', 60_000, 1, 200);
    // Another replica counts 90 meanwhile.
    await shared.increment('tenant:a', 60_000, 90);
    expect((await counter.increment('tenant:a', 60_000, 1, 200)).current).toBe(2);
    await counter.flush();
    // 1 + 90 + 1 = 92 known now; the next count would pass half of 200 after 8 more.
    for (let i = 93; i <= 100; i += 1) expect((await counter.increment('tenant:a', 60_000, 1, 200)).current).toBe(i);
    sent.length = 0;
    expect((await counter.increment('tenant:a', 60_000, 1, 200)).current).toBe(101);
    // That one went out at once, with the eight counted before it.
    expect(sent).toEqual([9]);
    expect((await counter.increment('tenant:a', 60_000, 1, 200)).current).toBe(102);
    expect(sent).toEqual([9, 1]);
  });

  it('sends every count of a small limit, or without a limit, at once', async () => {
    const now = () => 1_000;
    const { counter: shared, sent } = recordingCounter(now);
    const counter = batchRateCounter(shared, { now });
    for (let i = 0; i < 3; i += 1) await counter.increment('tenant:small', 60_000, 1, 99);
    for (let i = 0; i < 3; i += 1) await counter.increment('tenant:none', 60_000);
    expect(sent).toEqual([1, 1, 1, 1, 1, 1]);
  });

  it('starts a new window once the shared one has passed, dropping what belonged to the old one', async () => {
    let now = 1_000;
    const { counter: shared, sent } = recordingCounter(() => now);
    const counter = batchRateCounter(shared, { now: () => now, flushMs: 60_000 });
    await counter.increment('tenant:a', 60_000, 1, 1000);
    await counter.increment('tenant:a', 60_000, 1, 1000);
    now += 60_000;
    expect(await counter.increment('tenant:a', 60_000, 1, 1000)).toEqual({ current: 1, ttlMs: 60_000 });
    await counter.flush();
    expect(sent).toEqual([1, 1]);
  });

  it('keeps a batch the shared counter refused and sends it with the next', async () => {
    const now = () => 1_000;
    const inner = createMemoryRateCounter({ now });
    let failing = false;
    const errors: unknown[] = [];
    const shared: RateCounter = {
      increment: (key, windowMs, by) =>
        failing ? Promise.reject(new Error('Redis is down')) : inner.increment(key, windowMs, by),
      forget: (keys, prefixes) => inner.forget(keys, prefixes),
      close: () => inner.close(),
    };
    const counter = batchRateCounter(shared, { now, flushMs: 60_000, onFlushError: (error) => errors.push(error) });
    await counter.increment('tenant:a', 60_000, 1, 1000);
    for (let i = 0; i < 4; i += 1) await counter.increment('tenant:a', 60_000, 1, 1000);
    failing = true;
    await counter.flush();
    expect(errors).toHaveLength(1);
    failing = false;
    await counter.flush();
    expect((await inner.increment('tenant:a', 60_000, 0)).current).toBe(5);
  });

  it("forgets a deleted tenant's tallies with the shared counter's", async () => {
    const now = () => 1_000;
    const { counter: shared } = recordingCounter(now);
    const counter = batchRateCounter(shared, { now, flushMs: 60_000 });
    await counter.increment('principal:gone:fp', 60_000, 1, 1000);
    await counter.increment('principal:gone:fp', 60_000, 1, 1000);
    await counter.forget([], ['principal:gone:']);
    await counter.flush();
    expect((await counter.increment('principal:gone:fp', 60_000, 1, 1000)).current).toBe(1);
  });
});

describe('batched rate counter on Redis', () => {
  const namespace = testNamespace('batched-rate');
  let redis: ReturnType<typeof createRedisRateCounter>;

  beforeAll(async () => {
    await requireRedis();
    redis = createRedisRateCounter({ redis: { url: redisUrl(), commandTimeoutMs: 1000 }, prefix: `${namespace}:` });
    expect(await redis.ready(3000)).toBe(true);
  });
  afterAll(async () => {
    await redis?.close();
    await deleteNamespace(namespace);
  });

  it('adds its batches to the one count in Redis, which keeps its expiry', async () => {
    const counter = batchRateCounter(redis, { flushMs: 60_000 });
    for (let i = 0; i < 25; i += 1) await counter.increment('tenant:acme', 60_000, 1, 1000);
    expect((await dumpNamespace(namespace)).get(`${namespace}:tenant:acme`)).toBe('1');
    await counter.flush();
    expect((await dumpNamespace(namespace)).get(`${namespace}:tenant:acme`)).toBe('25');
    const { ttlMs } = await redis.increment('tenant:acme', 60_000, 0);
    expect(ttlMs).toBeGreaterThan(0);
    expect(ttlMs).toBeLessThanOrEqual(60_000);
  });
});

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayCache } from '../src/gateway-cache.js';
import { createCachingResourceService } from '../src/caching-resource-service.js';
import { createGatewayCache } from '../src/gateway-cache.js';
import { type OwnRedisServer, startRedisServer } from '@mcpgw/test-helpers/redis';
import { within } from '@mcpgw/test-helpers/within';
import { fakeService } from './fake-service.js';

// Redis unavailable or slow: requests are served uncached, never
// failed, then automatic recovery. The test owns its redis-server (a child
// process on a free port) and kills, restarts, pauses and resumes only it.

const signal = new AbortController().signal;
const COMMAND_TIMEOUT_MS = 500;
let server: OwnRedisServer;
let cache: GatewayCache;
const inner = fakeService('outage');
let service: ReturnType<typeof createCachingResourceService>;

beforeAll(async () => {
  server = await startRedisServer();
  // A 500 ms command deadline, not the 50 ms default: on a busy test machine a late event
  // loop runs the deadline's timer before it reads a live Redis's reply, and the healthy
  // phases here would see misses. A hung Redis still fails every command at its deadline.
  cache = createGatewayCache({
    key: randomBytes(32),
    redisUrl: server.url,
    commandTimeoutMs: COMMAND_TIMEOUT_MS,
    breaker: { probeIntervalMs: 100 },
  });
  expect(await cache.ready(3000)).toBe(true);
  service = createCachingResourceService(inner, { tenantId: 'acme', fingerprint: 'f', cache });
});
afterAll(async () => {
  await cache?.close();
  await server?.close();
});

/**
 * Runs `count` requests one after another; returns how many failed. A request queued behind a dead
 * or hung Redis would wait for ever (ioredis queues commands while down unless its offline queue is off): a burst
 * that ends while Redis is still down or paused is the proof that none waits on a queue.
 */
async function burst(count: number): Promise<{ failed: number }> {
  let failed = 0;
  for (let i = 0; i < count; i += 1) {
    try {
      await service.read(`test://doc/${i % 3}`, signal);
    } catch {
      failed += 1;
    }
  }
  return { failed };
}

const counters = () => cache.metrics().acme?.result ?? { hits: 0, misses: 0, errors: 0, bypasses: 0 };

/** Waits until requests are answered from the cache again (Redis is another process: polled). */
async function cachesAgain(): Promise<void> {
  const hitsBefore = counters().hits;
  await within(
    10_000,
    async () => {
      await burst(3);
      expect(counters().hits).toBeGreaterThan(hitsBefore);
    },
    'a cache hit once Redis is back',
  );
}

describe('Redis outage', () => {
  it('serves every request while Redis is killed, then caches again once it is back', async () => {
    await burst(6);
    expect(counters().hits).toBeGreaterThan(0);

    await server.kill();
    const callsBefore = inner.calls.read;
    const down = await burst(50);
    expect(down.failed).toBe(0);
    // Served by the backend: nothing cached could answer.
    expect(inner.calls.read - callsBefore).toBe(50);
    // The circuit opened: most requests did not even try Redis.
    expect(counters().bypasses).toBeGreaterThan(30);

    await server.restart();
    await cachesAgain();
  });

  it('serves every request while Redis hangs (commands time out at their deadline), then recovers', async () => {
    server.pause();
    try {
      const slow = await burst(20);
      expect(slow.failed).toBe(0);
      expect(counters().errors).toBeGreaterThan(0);
    } finally {
      server.resume();
    }
    await cachesAgain();
  });

  it('starts and serves while Redis is not there at all', async () => {
    const dead = await startRedisServer();
    await dead.kill();
    const orphan = createGatewayCache({ key: randomBytes(32), redisUrl: dead.url });
    try {
      expect(await orphan.ready(200)).toBe(false);
      const backend = fakeService('orphan');
      const view = createCachingResourceService(backend, { tenantId: 't', fingerprint: 'f', cache: orphan });
      for (let i = 0; i < 10; i += 1) await view.listResources(undefined, signal);
      expect(backend.calls.list).toBe(10);
    } finally {
      await orphan.close();
    }
  });
});

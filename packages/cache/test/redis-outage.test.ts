import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayCache } from '../src/gateway-cache.js';
import { createCachingResourceService } from '../src/caching-resource-service.js';
import { createGatewayCache } from '../src/gateway-cache.js';
import { type OwnRedisServer, startRedisServer } from '@mcpgw/test-helpers/redis';
import { fakeService } from './fake-service.js';

// Redis unavailable or slow: requests are served uncached, never
// failed, then automatic recovery. The test owns its redis-server (a child
// process on a free port) and kills, restarts, pauses and resumes only it.

const signal = new AbortController().signal;
const COMMAND_TIMEOUT_MS = 500;
/** Far above one command deadline (a request makes a few commands): a request queued behind a dead or hung Redis waits for ever, which this catches. */
const HANG_MS = 5_000;
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

/** Runs `count` requests one after another; returns how many failed and the slowest. */
async function burst(count: number): Promise<{ failed: number; slowestMs: number }> {
  let failed = 0;
  let slowestMs = 0;
  for (let i = 0; i < count; i += 1) {
    const started = performance.now();
    try {
      await service.read(`test://doc/${i % 3}`, signal);
    } catch {
      failed += 1;
    }
    slowestMs = Math.max(slowestMs, performance.now() - started);
  }
  return { failed, slowestMs };
}

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

const counters = () => cache.metrics().acme?.result ?? { hits: 0, misses: 0, errors: 0, bypasses: 0 };

/** Whether requests are answered from the cache again within 8 s (Redis is another process: polled). */
async function cachesAgain(): Promise<boolean> {
  const hitsBefore = counters().hits;
  return until(async () => {
    await burst(3);
    return counters().hits > hitsBefore;
  }, 8000);
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
    // A request waits on no queue (ioredis queues while down unless told not to); a hang detector, not a speed claim.
    expect(down.slowestMs).toBeLessThan(HANG_MS);

    await server.restart();
    expect(await cachesAgain()).toBe(true);
  });

  it('serves every request while Redis hangs (commands time out at their deadline), then recovers', async () => {
    server.pause();
    try {
      const slow = await burst(20);
      expect(slow.failed).toBe(0);
      expect(slow.slowestMs).toBeLessThan(HANG_MS);
      expect(counters().errors).toBeGreaterThan(0);
    } finally {
      server.resume();
    }
    expect(await cachesAgain()).toBe(true);
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

import { request } from 'node:http';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { within } from '@mcpgw/test-helpers/within';
import type { FastifyInstance } from 'fastify';
import type { RateCounter } from '@mcpgw/cache';
import { createRedisRateCounter } from '@mcpgw/cache';
import { buildTestApp, type TestApp } from '@mcpgw/test-helpers/gateway';
import { MODERN_META } from '@mcpgw/test-helpers/mcp-http';
import type { OwnRedisServer } from '@mcpgw/test-helpers/redis';
import { startRedisServer } from '@mcpgw/test-helpers/redis';

// Bulkheads: a tenant's in-flight slot is given back whenever its
// request ends, including a client that leaves while the tenant's rate limit
// is still being counted in Redis (the request goes on after that count, and
// must neither keep the slot nor run uncancelled).

const BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/list', params: { _meta: MODERN_META } });

/** POSTs a listing over a real socket; `leaveAfterMs` destroys the socket that long after the server read the request. */
function post(port: number, leaveAfterMs?: number, app?: FastifyInstance): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/t/capped/mcp',
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'resources/list',
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(0));
    if (leaveAfterMs !== undefined && app !== undefined) {
      app.server.once('request', () => setTimeout(() => req.destroy(), leaveAfterMs));
    }
    req.end(BODY);
  });
}

describe('the in-flight slot of a client that leaves during the rate-limit count', () => {
  let app: FastifyInstance;
  let gateway: TestApp;
  let redis: OwnRedisServer;
  let counter: RateCounter;
  let port: number;
  let logs = '';
  // The warnings tell when the pending count gave up on Redis and the request went on.
  const logStream = new PassThrough();
  logStream.on('data', (chunk: Buffer) => (logs += chunk.toString()));

  beforeAll(async () => {
    redis = await startRedisServer();
    // Longer than the client stays: the count is still pending in a paused Redis when it leaves.
    counter = createRedisRateCounter({ redis: { url: redis.url, commandTimeoutMs: 1500 }, prefix: 'mcpgw:rl:' });
    gateway = await buildTestApp({
      bootstrap: {
        configDir: '.',
        document: {
          tenants: [
            {
              id: 'capped',
              anonymous: true,
              sources: [{ id: 'docs', type: 'static', resources: [{ uri: 'test://docs/a', name: 'a', text: 'a' }] }],
              // Its own rate limit counts for loopback callers too, and a limit under 100 a minute
              // is counted in Redis before each request goes on (not batched), so every request waits on Redis.
              limits: { maxInFlight: 1, requestsPerMinute: 50 },
            },
          ],
        },
      },
      env: { REDIS_URL: redis.url, PORT: '0' },
      rateCounter: counter,
      logStream,
    });
    app = gateway.app;
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    port = typeof address === 'object' && address !== null ? address.port : 0;
  });
  afterAll(async () => {
    await gateway?.close();
    await counter?.close();
    await redis?.close();
  });

  it('is given back, and the next request of the tenant is served', async () => {
    expect(await post(port)).toBe(200);
    redis.pause();
    try {
      // The client leaves 300 ms in, while the tenant's count waits on Redis (up to 1.5 s, then in process).
      expect(await post(port, 300, app)).toBe(0);
      // The count gives up on Redis after 1.5 s and the request goes on, counted in process.
      await within(
        10_000,
        () => expect(logs).toContain('rate limits count in process while Redis fails'),
        'the fallback',
      );
      await within(10_000, () => expect(app.limits.inFlight.count('capped')).toBe(0), 'the slot given back');
    } finally {
      redis.resume();
    }
    // With its one slot kept by the request that left, every later request would be refused with 503.
    await within(10_000, async () => expect(await post(port)).toBe(200), 'a later request served');
  });
});

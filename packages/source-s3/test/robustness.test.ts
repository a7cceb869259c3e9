import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { isGatewayError, silentLogger, type Source } from '@mcpgw/core';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createS3Source } from '../src/s3-source.js';
import { s3SourceOptionsSchema } from '../src/s3-source-options.js';
import { tenantInFlight } from '../src/tenant-slots.js';
import { answerObject, startFakeS3, type FakeS3 } from './fake-s3-server.js';

const sources: Source[] = [];
const servers: FakeS3[] = [];

function source(
  endpoint: string,
  options: Record<string, unknown>,
  context: { sourceId: string; tenantId: string },
): Source {
  const created = createS3Source(
    s3SourceOptionsSchema.parse({
      endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test-secret' },
      bucket: 'private-bucket-name',
      ...options,
    }),
    { ...context, configDir: '/', logger: silentLogger },
  );
  sources.push(created);
  return created;
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof Error) return error;
    throw new Error(`rejected with a non-error: ${String(error)}`);
  }
  throw new Error('expected a rejection');
}

/** `arrived` resolves once `count` has been called `times` times (a backend handler counts the requests it got). */
function arrivals(times: number): { arrived: Promise<void>; count: () => void } {
  let seen = 0;
  let reached!: () => void;
  const arrived = new Promise<void>((resolve) => (reached = resolve));
  return {
    arrived,
    count: () => {
      seen += 1;
      if (seen === times) reached();
    },
  };
}

/**
 * A backend whose `slow-bucket` answers after `delayMs` and any other bucket
 * at once; `arrived` resolves once `slowRequests` requests reached the slow one.
 */
async function slowBucketBackend(
  delayMs: number,
  slowRequests: number,
): Promise<{ backend: FakeS3; arrived: Promise<void> }> {
  const slow = arrivals(slowRequests);
  const backend = await startFakeS3((_request, response, bucket) => {
    if (bucket !== 'slow-bucket') return answerObject(response, 'fast');
    slow.count();
    return answerObject(response, 'slow', delayMs);
  });
  servers.push(backend);
  return { backend, arrived: slow.arrived };
}

afterEach(async () => {
  await Promise.all(sources.splice(0).map((each) => each.close()));
});

afterAll(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe('S3 source timeouts and retries', () => {
  /** Accepts connections and never answers. */
  let silent: Server;
  let silentEndpoint: string;
  let connections = 0;
  const sockets = new Set<Socket>();

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => silent?.close(() => resolve()));
  });

  it('fail with MCPGW_SOURCE_UNAVAILABLE naming only the source id when the socket never answers', async () => {
    silent = createServer((socket) => {
      connections += 1;
      sockets.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    silentEndpoint = `http://127.0.0.1:${port}`;
    const stuck = source(
      silentEndpoint,
      { requestTimeoutMs: 200, maxAttempts: 2 },
      { sourceId: 'stuck', tenantId: 't-timeout' },
    );

    for (const attempt of [() => stuck.read('s3:///stuck/a.txt'), () => stuck.listResources({ limit: 10 })]) {
      connections = 0;
      const started = Date.now();
      const error = await rejection(attempt());
      const elapsed = Date.now() - started;
      expect(isGatewayError(error) && error.code).toBe('MCPGW_SOURCE_UNAVAILABLE');
      expect(error.message).toContain('"stuck"');
      for (const secret of ['127.0.0.1', String(port), 'private-bucket-name'])
        expect(error.message).not.toContain(secret);
      // Bounded: at most requestTimeoutMs x maxAttempts (plus scheduling), never a hang.
      expect(elapsed).toBeGreaterThanOrEqual(190);
      expect(elapsed).toBeLessThan(1_500);
      expect(connections).toBeGreaterThanOrEqual(1);
      expect(connections).toBeLessThanOrEqual(2);
    }

    const started = Date.now();
    const health = await stuck.health();
    expect(health.ok).toBe(false);
    expect(health.detail).not.toContain('127.0.0.1');
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('retry a failing backend exactly maxAttempts times', async () => {
    const failing = await startFakeS3((_request, response) => {
      response.writeHead(503, { 'content-type': 'application/xml' });
      response.end('<Error><Code>SlowDown</Code><Message>busy</Message></Error>');
    });
    servers.push(failing);
    const flaky = source(failing.endpoint, { maxAttempts: 3 }, { sourceId: 'flaky', tenantId: 't-retry' });
    const error = await rejection(flaky.read('s3:///flaky/a.txt'));
    expect(isGatewayError(error) && error.code).toBe('MCPGW_SOURCE_UNAVAILABLE');
    expect(failing.requests).toBe(3);
  });

  it('pass a caller abort through instead of blaming the backend', async () => {
    const { arrived, count } = arrivals(1);
    const hanging = await startFakeS3(count);
    servers.push(hanging);
    const slow = source(hanging.endpoint, {}, { sourceId: 'slow', tenantId: 't-abort' });
    const controller = new AbortController();
    const pending = slow.read('s3:///slow/a.txt', controller.signal);
    // The request hangs at the backend; then the caller goes away.
    await arrived;
    controller.abort(new Error('client went away'));
    const error = await rejection(pending);
    expect(error.message).toBe('client went away');
  });

  it('guard the size cap while streaming a body of undeclared length', async () => {
    const chunked = await startFakeS3((_request, response) => {
      // No Content-Length: chunked transfer, so only the streaming guard can stop it.
      response.writeHead(200, { 'content-type': 'application/octet-stream' });
      for (let i = 0; i < 8; i++) response.write(Buffer.alloc(512, i));
      response.end();
    });
    servers.push(chunked);
    const capped = source(chunked.endpoint, { maxObjectBytes: 1024 }, { sourceId: 'capped', tenantId: 't-cap' });
    const error = await rejection(capped.read('s3:///capped/big.bin'));
    expect(isGatewayError(error) && error.code).toBe('MCPGW_RESOURCE_TOO_LARGE');
    expect(error.message).toContain('1 KiB (1024 bytes)');
  });
});

describe('S3 per-tenant in-flight cap', () => {
  it("holds one tenant's requests to its cap across its sources while another tenant reads at full speed", async () => {
    const { backend, arrived: saturated } = await slowBucketBackend(300, 3);
    let slowMax = 0;
    const slowTenant = 'tenant-with-slow-bucket';
    const one = source(
      backend.endpoint,
      { bucket: 'slow-bucket', maxInFlightPerTenant: 3 },
      { sourceId: 'one', tenantId: slowTenant },
    );
    const two = source(
      backend.endpoint,
      { bucket: 'slow-bucket', maxInFlightPerTenant: 3 },
      { sourceId: 'two', tenantId: slowTenant },
    );
    const other = source(
      backend.endpoint,
      { bucket: 'fast-bucket', maxInFlightPerTenant: 3 },
      { sourceId: 'one', tenantId: 'other-tenant' },
    );

    const sampler = setInterval(() => {
      slowMax = Math.max(slowMax, tenantInFlight(slowTenant));
    }, 5);
    const started = Date.now();
    const slowReads = Array.from({ length: 12 }, (_, i) =>
      (i % 2 === 0 ? one : two).read(`s3:///${i % 2 === 0 ? 'one' : 'two'}/k${i}.txt`).then(() => Date.now() - started),
    );
    await saturated;
    // The slow tenant is saturated; the other tenant is not queued behind it.
    const fastStarted = Date.now();
    const fast = await other.read('s3:///one/f.txt');
    const fastElapsed = Date.now() - fastStarted;
    const slowDone = await Promise.all(slowReads);
    clearInterval(sampler);

    expect(fast).toEqual([{ uri: 's3:///one/f.txt', mimeType: 'text/plain', text: 'fast' }]);
    expect(fastElapsed).toBeLessThan(250);
    expect(Math.min(...slowDone)).toBeGreaterThan(fastElapsed);
    // 12 reads, 3 at a time, 300 ms each: about 1.2 s, and never more than 3 at once.
    expect(slowMax).toBe(3);
    expect(backend.maxInFlight).toBeLessThanOrEqual(4); // 3 slow + the fast one
    expect(Math.max(...slowDone)).toBeGreaterThanOrEqual(1_150);
    expect(tenantInFlight(slowTenant)).toBe(0);
  });

  it('fails a request that waited for a tenant slot past its deadline', async () => {
    const { backend, arrived: hogging } = await slowBucketBackend(1_000, 1);
    const tenantId = 'tenant-queued';
    const hog = source(
      backend.endpoint,
      { bucket: 'slow-bucket', maxInFlightPerTenant: 1 },
      { sourceId: 'hog', tenantId },
    );
    const waiter = source(
      backend.endpoint,
      { bucket: 'fast-bucket', maxInFlightPerTenant: 1, requestTimeoutMs: 200, maxAttempts: 1 },
      { sourceId: 'waiter', tenantId },
    );
    const hogRead = hog.read('s3:///hog/a.txt');
    await hogging; // the hog holds the tenant's one slot
    const started = Date.now();
    const error = await rejection(waiter.read('s3:///waiter/b.txt'));
    expect(isGatewayError(error) && error.code).toBe('MCPGW_SOURCE_UNAVAILABLE');
    expect(error.message).toBe('S3 source "waiter" did not answer within 200 ms');
    expect(Date.now() - started).toBeLessThan(600);
    expect(await hogRead).toHaveLength(1);
    // The waiter never reached the backend.
    expect(backend.requests).toBe(1);
  });
});

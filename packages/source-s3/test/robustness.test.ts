import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
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
 * A backend whose `slow-bucket` answers after `delayMs` (counted once `gate`
 * resolves, when one is given) and any other bucket at once; `arrived`
 * resolves once `slowRequests` requests reached the slow one.
 */
async function slowBucketBackend(
  delayMs: number,
  slowRequests: number,
  gate: Promise<void> = Promise.resolve(),
): Promise<{ backend: FakeS3; arrived: Promise<void> }> {
  const slow = arrivals(slowRequests);
  const backend = await startFakeS3(async (_request, response, bucket) => {
    if (bucket !== 'slow-bucket') return answerObject(response, 'fast');
    slow.count();
    await gate;
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

/**
 * A server that accepts connections and never answers, keeping them in the
 * order it accepted them. `made()` says how many connections were made since
 * the last call to it, excluding its own probe: the probe connects after the
 * caller's request has settled, and the kernel hands connections over first in,
 * first out, so once the server has accepted the probe it has accepted every
 * connection made before it. A connection that is accepted late on a busy
 * machine is thus counted for the request that made it, never for the next.
 */
async function startSilentServer(): Promise<{ port: number; made(): Promise<number>; close(): Promise<void> }> {
  const accepted: Socket[] = [];
  const waiting = new Map<number, () => void>();
  const server = createServer((socket) => {
    accepted.push(socket);
    socket.on('error', () => {});
    if (socket.remotePort !== undefined) waiting.get(socket.remotePort)?.();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  let counted = 0;
  const made = async (): Promise<number> => {
    const probe = connect(port, '127.0.0.1');
    await once(probe, 'connect');
    const probePort = probe.localPort;
    if (probePort === undefined) throw new Error('the probe connection has no local port');
    const seen = () => accepted.findIndex((socket) => socket.remotePort === probePort);
    if (seen() === -1) await new Promise<void>((resolve) => waiting.set(probePort, resolve));
    waiting.delete(probePort);
    probe.destroy();
    const at = seen();
    const count = at - counted;
    counted = at + 1;
    return count;
  };
  const close = async () => {
    for (const socket of accepted) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { port, made, close };
}

describe('S3 source timeouts and retries', () => {
  it('fail with MCPGW_SOURCE_UNAVAILABLE naming only the source id when the socket never answers', async () => {
    const silent = await startSilentServer();
    try {
      const stuck = source(
        `http://127.0.0.1:${silent.port}`,
        { requestTimeoutMs: 200, maxAttempts: 2 },
        { sourceId: 'stuck', tenantId: 't-timeout' },
      );

      for (const attempt of [() => stuck.read('s3:///stuck/a.txt'), () => stuck.listResources({ limit: 10 })]) {
        const started = Date.now();
        const error = await rejection(attempt());
        const elapsed = Date.now() - started;
        expect(isGatewayError(error) && error.code).toBe('MCPGW_SOURCE_UNAVAILABLE');
        expect(error.message).toContain('"stuck"');
        for (const secret of ['127.0.0.1', String(silent.port), 'private-bucket-name'])
          expect(error.message).not.toContain(secret);
        // It gave up after at least one request timeout (a lower bound: a busy machine only makes
        // it longer), and at all: the silent server never answers, so only the timeout ends it.
        expect(elapsed).toBeGreaterThanOrEqual(190);
        // At most maxAttempts connections for this call, each counted for the call that made it.
        const connections = await silent.made();
        expect(connections).toBeGreaterThanOrEqual(1);
        expect(connections).toBeLessThanOrEqual(2);
      }

      // The probe gives up too (the silent server never answers it).
      const health = await stuck.health();
      expect(health.ok).toBe(false);
      expect(health.detail).not.toContain('127.0.0.1');
    } finally {
      await silent.close();
    }
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
    // The slow bucket holds its answers until the fast read is done: the fast read cannot
    // be overtaken by a slow one however busy the machine is, and must finish on its own.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { backend, arrived: saturated } = await slowBucketBackend(300, 3, gate);
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
    let released = 0;
    let slowSettled = 0;
    const slowReads = Array.from({ length: 12 }, (_, i) =>
      (i % 2 === 0 ? one : two).read(`s3:///${i % 2 === 0 ? 'one' : 'two'}/k${i}.txt`).finally(() => {
        slowSettled += 1;
      }),
    );
    const slowDone = slowReads.map((read) => read.then(() => Date.now() - released));
    await saturated;
    // The slow tenant is saturated; the other tenant is not queued behind it: its read
    // completes while the slow tenant holds all its slots and none of its reads is answered.
    // Queued behind it, the read would wait for the gate, which opens only after it.
    let timer: NodeJS.Timeout | undefined;
    const fast = await Promise.race([
      other.read('s3:///one/f.txt'),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('the other tenant was queued behind the slow one')), 10_000);
      }),
    ]).finally(() => clearTimeout(timer));
    expect(fast).toEqual([{ uri: 's3:///one/f.txt', mimeType: 'text/plain', text: 'fast' }]);
    expect(slowSettled).toBe(0);
    expect(tenantInFlight(slowTenant)).toBe(3);
    released = Date.now();
    release();
    const slowElapsed = await Promise.all(slowDone);
    clearInterval(sampler);

    // 12 reads, 3 at a time, 300 ms each: about 1.2 s after the gate opens, and never more than 3 at once.
    expect(slowMax).toBe(3);
    expect(backend.maxInFlight).toBeLessThanOrEqual(4); // 3 slow + the fast one
    expect(Math.max(...slowElapsed)).toBeGreaterThanOrEqual(1_150);
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
    let hogSettled = false;
    const hogRead = hog.read('s3:///hog/a.txt').finally(() => {
      hogSettled = true;
    });
    await hogging; // the hog holds the tenant's one slot
    const error = await rejection(waiter.read('s3:///waiter/b.txt'));
    expect(isGatewayError(error) && error.code).toBe('MCPGW_SOURCE_UNAVAILABLE');
    expect(error.message).toBe('S3 source "waiter" did not answer within 200 ms');
    // Failed at its own 200 ms deadline, not once the hog's 1 s answer freed the slot
    // (the hog's answer is due 800 ms after the waiter's deadline, and timers fire in deadline order).
    expect(hogSettled).toBe(false);
    expect(await hogRead).toHaveLength(1);
    // The waiter never reached the backend.
    expect(backend.requests).toBe(1);
  });
});

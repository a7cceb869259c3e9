import * as net from 'node:net';
import type { Logger, SourceChange } from '@mcpgw/core';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { within } from '@mcpgw/test-helpers/within';
import { createPostgresSource } from '../src/postgres-source.js';
import { postgresSourceOptionsSchema } from '../src/postgres-source-options.js';
import { createFixture, type Fixture } from './fixture.js';

/**
 * A Postgres source whose server cannot be reached at
 * start used to retry its change feed about every 265 ms forever, logging two
 * warnings and opening a connection each time. Against a real closed port,
 * with the clock faked: delays grow to a 30 s cap, connection attempts per
 * minute are bounded, and warnings are condensed to one per doubling.
 */

function recordingLogger() {
  const warnings: object[] = [];
  const infos: string[] = [];
  const logger: Logger = {
    debug: () => {},
    info: (_fields, msg) => infos.push(msg ?? ''),
    warn: (fields) => warnings.push(fields),
    error: (fields) => warnings.push(fields),
    child: () => logger,
  };
  return { logger, warnings, infos };
}

/**
 * Lets real I/O run until the attempt in flight has been refused (its
 * sockets closed) and the feed has scheduled its next attempt, the only timer.
 */
async function untilRetryScheduled(sockets: () => net.Socket[]): Promise<void> {
  const waiting = () => vi.getTimerCount() !== 1 || sockets().length === 0 || sockets().some((s) => !s.destroyed);
  for (let i = 0; i < 10_000 && waiting(); i++) await new Promise((resolve) => setImmediate(resolve));
  expect(waiting()).toBe(false);
}

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe.each(['poll', 'event-trigger'] as const)('a change feed (%s) on a closed port', (mode) => {
  it('backs off to 30 s, opens few connections and logs a few condensed lines', async () => {
    const port = await freePort(); // nothing listens there
    const { logger, warnings } = recordingLogger();
    const connect = vi.spyOn(net.Socket.prototype, 'connect');
    const ours = () =>
      connect.mock.contexts.filter((_, i) =>
        JSON.stringify(connect.mock.calls[i]).includes(String(port)),
      ) as net.Socket[];
    const connections = () => ours().length;
    const source = createPostgresSource(
      postgresSourceOptionsSchema.parse({
        schemas: ['public'],
        connection: { url: `postgres://reader@127.0.0.1:${port}/crm` },
        changeDetection: { mode, pollIntervalMs: 1_000 },
      }),
      'down-db',
      logger,
    );
    // Only timers and the clock are faked: the refused connections are real.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const start = Date.now();
    const stop = source.watch!(() => {});
    const delays: number[] = [];
    const openedByMinute: number[] = [];
    try {
      while (Date.now() - start < 10 * 60_000 && delays.length < 500) {
        await untilRetryScheduled(ours);
        const before = Date.now();
        await vi.advanceTimersToNextTimerAsync();
        delays.push(Date.now() - before);
        const minute = Math.floor((Date.now() - start) / 60_000);
        openedByMinute[minute] = connections();
      }
    } finally {
      stop();
      vi.useRealTimers();
      await source.close();
    }

    // Ten simulated minutes: 250 ms doubling (less up to a fifth of jitter) to the 30 s cap.
    const attempts = delays.length;
    expect(attempts).toBeLessThan(40);
    expect(delays[0]).toBeGreaterThanOrEqual(200);
    expect(delays[0]).toBeLessThanOrEqual(250);
    for (let i = 1; i < 8; i++) expect(delays[i]).toBeGreaterThan(delays[i - 1]! * 1.5);
    expect(Math.max(...delays)).toBeLessThanOrEqual(30_000);
    expect(Math.min(...delays.slice(8))).toBeGreaterThanOrEqual(24_000);

    // One connection per attempt: about 10 in the first minute, then at most 3 a minute.
    expect(connections()).toBeLessThanOrEqual(attempts + 1);
    expect(openedByMinute[0]).toBeLessThanOrEqual(10);
    for (let m = 1; m < openedByMinute.length; m++) {
      expect((openedByMinute[m] ?? 0) - (openedByMinute[m - 1] ?? 0)).toBeLessThanOrEqual(3);
    }

    // Log-scale warnings (attempts 1, 2, 4, 8, 16, 32), each with its attempt count.
    expect(warnings.length).toBeLessThanOrEqual(Math.floor(Math.log2(attempts)) + 1);
    expect(warnings.map((w) => (w as { attempt?: number }).attempt)).toEqual(
      [1, 2, 4, 8, 16, 32].filter((n) => n <= attempts),
    );
    // A server that cannot be reached is not a server that refused the trigger.
    expect(JSON.stringify(warnings)).not.toContain('polling the catalog instead');
  }, 60_000);
});

describe('a change feed whose database comes up after start', () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await createFixture('feed-late');
  });
  afterAll(async () => {
    await fx?.close();
  });

  it('installs its event trigger and listens once the database answers', async () => {
    // The database is reached through a port nothing listens on yet.
    const port = await freePort(); // nothing listens there
    const target = new URL(fx.db.url);
    const url = new URL(fx.db.url);
    url.host = `127.0.0.1:${port}`;
    const { logger, warnings, infos } = recordingLogger();
    const source = createPostgresSource(
      postgresSourceOptionsSchema.parse({
        schemas: ['public'],
        connection: { url: url.toString() },
        changeDetection: { mode: 'event-trigger', pollIntervalMs: 3_600_000 },
      }),
      'late',
      logger,
    );
    const events: SourceChange[] = [];
    const stop = source.watch!((change) => events.push(change));
    const sockets = new Set<net.Socket>();
    const proxy = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    try {
      await within(10_000, () => expect(warnings.length).toBe(2), 'two warnings');
      await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));
      await within(
        10_000,
        () => expect(infos).toContain('postgres change feed cannot reach the database; retrying: recovered'),
        'the recovery line',
      );
      await source.settled?.();
      // Not polling: the trigger was installed once the server answered.
      expect(JSON.stringify(warnings)).not.toContain('polling the catalog instead');
      await fx.db.sql('CREATE TABLE public.after_outage (id int)');
      await within(
        10_000,
        () =>
          expect(events).toContainEqual({ type: 'resource-updated', uri: 'db+postgres:///late/public/after_outage' }),
        'the new table reported',
      );
    } finally {
      stop();
      await source.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  }, 30_000);
});

import { afterEach, describe, expect, it } from 'vitest';
import { startFreezingProxy } from '@mcpgw/test-helpers/freezing-proxy';
import { createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { listenOnPostgres } from '../src/postgres-listener.js';
import { within } from '@mcpgw/test-helpers/within';

// The control plane's change signal on Postgres (LISTEN/NOTIFY): a listening
// connection that goes silent without an error (half-open) would never
// deliver another notification and never say so. Its heartbeat finds it, the
// connection is reopened, and the caller is told to resync
// (docs/adr/0010-one-replica-bus.md). The listener connects through a proxy
// that can freeze it.

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

describe('the listening connection', () => {
  it('is found silent by its heartbeat, reopened, and the caller told to resync', async () => {
    const db = await createTestDatabase('listener');
    closers.push(() => db.drop());
    const proxy = await startFreezingProxy(db.url, 5432);
    closers.push(() => proxy.close());
    const notified: string[] = [];
    const events: string[] = [];
    const stop = await listenOnPostgres(
      proxy.url,
      'mcpgw_heartbeat_test',
      {
        onNotify: (payload) => notified.push(payload),
        onLost: () => events.push('lost'),
        onResubscribed: () => events.push('resubscribed'),
      },
      200,
    );
    closers.push(stop);
    await db.sql(`NOTIFY mcpgw_heartbeat_test, 'before'`);
    await within(5000, () => expect(notified).toEqual(['before']));

    // The connection stays open, but nothing Postgres sends on it arrives any more.
    proxy.freeze(/LISTEN/);
    await db.sql(`NOTIFY mcpgw_heartbeat_test, 'while-silent'`);
    await within(10_000, () => expect(events).toContain('resubscribed'));
    // What was sent while it was silent is gone: that is what the resync is for.
    expect(notified).toEqual(['before']);
    expect(events[0]).toBe('lost');

    await db.sql(`NOTIFY mcpgw_heartbeat_test, 'after'`);
    await within(5000, () => expect(notified).toEqual(['before', 'after']));
  });
});

/**
 * The official client's `listen()` (@modelcontextprotocol/client 2.4.0,
 * `Client.listen`, protocol revision 2026-07-28) against the gateway: the
 * honored filter it reports, a real file change (the files source's change
 * feed, put on the gateway's event bus by the test-only producer) reaching its
 * notification handler, its `close()` freeing the gateway's slot, and the
 * gateway's shutdown observed by the client as a graceful end.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { within } from '@mcpgw/test-helpers/within';
import { docsUri, startE2eGateway, TENANT } from './e2e-gateway.js';
import type { E2eGateway } from './e2e-gateway.js';

let e2e: E2eGateway;
/**
 * The clients' own connection pool, destroyed before the gateway closes: a
 * fetch aborted mid-stream can leave the pool a connection that never sends
 * a request, which a server's close waits on until its headers timeout.
 */
const pool = new Agent();
const pooledFetch = ((url: string | URL, init?: RequestInit) =>
  undiciFetch(url, { ...(init as object), dispatcher: pool })) as unknown as typeof fetch;

async function connect(): Promise<Client> {
  const client = new Client(
    { name: 'mcpgw-e2e-listen', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new StreamableHTTPClientTransport(e2e.url, { fetch: pooledFetch }));
  return client;
}

beforeAll(async () => {
  e2e = await startE2eGateway();
});

afterAll(async () => {
  await pool.destroy();
  await e2e?.close();
});

describe('official client listen()', () => {
  it('sees the capabilities, the honored filter and a real update; close() frees the stream', async () => {
    const client = await connect();
    expect(client.getServerCapabilities()?.resources).toEqual({ listChanged: true, subscribe: true });
    const readme = docsUri('readme.md');
    const updates: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', (notification) => {
      updates.push(notification.params.uri);
    });
    const subscription = await client.listen({
      resourcesListChanged: true,
      toolsListChanged: true,
      resourceSubscriptions: [readme, 'test://not-here'],
    });
    expect(subscription.honoredFilter).toEqual({ resourcesListChanged: true, resourceSubscriptions: [readme] });
    expect(e2e.gateway.app.listenStreams.count(TENANT)).toBe(1);
    // The watcher reports changes from its first scan on: wait for that scan, then change the file.
    const sources = e2e.gateway.app.tenants.serving.get(TENANT)!.catalog.sources;
    await Promise.all(sources.map((source) => source.settled?.()));
    await writeFile(join(e2e.dir, 'docs', 'readme.md'), '# Read me, changed\n');
    await within(15_000, () => expect(updates.length).toBeGreaterThan(0), 'an update of the changed file');
    expect(updates[0]).toBe(readme);
    await subscription.close();
    expect(await subscription.closed).toBe('local');
    await within(10_000, () => expect(e2e.gateway.app.listenStreams.count(TENANT)).toBe(0), 'the closed stream freed');
    await client.close();
  });

  it('reports the gateway shutting down as a graceful end', async () => {
    const own = await startE2eGateway();
    try {
      const client = new Client(
        { name: 'mcpgw-e2e-listen', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      await client.connect(new StreamableHTTPClientTransport(own.url, { fetch: pooledFetch }));
      const subscription = await client.listen({ resourcesListChanged: true });
      await own.gateway.app.close();
      expect(await subscription.closed).toBe('graceful');
      await client.close();
    } finally {
      await own.close().catch(() => undefined);
    }
  });
});

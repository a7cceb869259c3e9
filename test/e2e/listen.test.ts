/**
 * The official client's `listen()` (@modelcontextprotocol/client 2.4.0,
 * `Client.listen`, protocol revision 2026-07-28) against the gateway: the
 * honored filter it reports, an update published on the gateway's event bus
 * (as a source's change feed does) reaching its notification handler, its
 * `close()` freeing the gateway's slot, and the gateway's shutdown observed by
 * the client as a graceful end. A real source change reaching a stream is
 * test/integration/listen-lifetimes.test.ts.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docsUri, startE2eGateway, TENANT } from './e2e-gateway.js';
import type { E2eGateway } from './e2e-gateway.js';

let e2e: E2eGateway;

async function connect(): Promise<Client> {
  const client = new Client(
    { name: 'mcpgw-e2e-listen', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new StreamableHTTPClientTransport(e2e.url));
  return client;
}

async function eventually(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within 5 s`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

beforeAll(async () => {
  e2e = await startE2eGateway();
});

afterAll(async () => {
  await e2e?.close();
});

describe('official client listen()', () => {
  it('sees the capabilities, the honored filter and an update; close() frees the stream', async () => {
    const client = await connect();
    expect(client.getServerCapabilities()?.resources).toEqual({ listChanged: true, subscribe: true });
    const readme = docsUri('readme.md');
    const updates: string[] = [];
    let notify: () => void = () => undefined;
    const updated = new Promise<void>((resolve) => (notify = resolve));
    client.setNotificationHandler('notifications/resources/updated', (notification) => {
      updates.push(notification.params.uri);
      notify();
    });
    const subscription = await client.listen({
      resourcesListChanged: true,
      toolsListChanged: true,
      resourceSubscriptions: [readme, 'test://not-here'],
    });
    expect(subscription.honoredFilter).toEqual({ resourcesListChanged: true, resourceSubscriptions: [readme] });
    expect(e2e.gateway.app.listenStreams.count(TENANT)).toBe(1);
    e2e.gateway.app.events.publish({
      type: 'source',
      tenantId: TENANT,
      sourceId: 'docs',
      change: { type: 'resource-updated', uri: readme },
    });
    await updated;
    expect(updates[0]).toBe(readme);
    await subscription.close();
    expect(await subscription.closed).toBe('local');
    await eventually(() => e2e.gateway.app.listenStreams.count(TENANT) === 0, 'the closed stream freed');
    await client.close();
  });

  it('reports the gateway shutting down as a graceful end', async () => {
    const own = await startE2eGateway();
    try {
      const client = new Client(
        { name: 'mcpgw-e2e-listen', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
      await client.connect(new StreamableHTTPClientTransport(own.url));
      const subscription = await client.listen({ resourcesListChanged: true });
      await own.gateway.app.close();
      expect(await subscription.closed).toBe('graceful');
      await client.close();
    } finally {
      await own.close().catch(() => undefined);
    }
  });
});

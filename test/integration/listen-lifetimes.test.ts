import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StartedGateway, startGateway } from '@mcpgw/test-helpers/gateway';
import { type LocalIssuer, startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { mcpPost } from '@mcpgw/test-helpers/mcp-http';
import { type ListenStream, openListen } from '@mcpgw/test-helpers/sse-listen';
import { validateErrorResponse, validateStreamMessage } from '@mcpgw/test-helpers/wire-schema';
import { parseExposition } from '@mcpgw/test-helpers/prometheus-text';
import { within } from '@mcpgw/test-helpers/within';

// How listen streams live and end (MCP 2026-07-28, basic/patterns/subscriptions
// and basic/transports/streamable-http): keep-alive comments, caps that refuse
// with a JSON-RPC error, a client gone away giving its place back, bursts
// coalesced, the token's expiry and the server's shutdown ending a stream with
// its completion, and a real files source's change reaching a stream.

const PUBLIC_URL = 'http://127.0.0.1:1';
const PUB_A = 'file:///docs/pub/a.md';
const INTERVAL_MS = 300;

let issuer: LocalIssuer;
let gateway: StartedGateway;
let docsRoot: string;
const opened: ListenStream[] = [];

const endpoint = () => `${gateway.baseUrl}/t/acme/mcp`;
const bearer = async (sub: string, claims: Record<string, unknown> = {}) => ({
  authorization: `Bearer ${await issuer.token({ sub, aud: `${PUBLIC_URL}/t/acme/mcp`, ...claims })}`,
});

async function listen(sub: string, notifications: Record<string, unknown>, claims: Record<string, unknown> = {}) {
  const stream = await openListen(endpoint(), notifications, { id: 'l', headers: await bearer(sub, claims) });
  opened.push(stream);
  return stream;
}

/** Polls a count this process can read but not await (a server-side close is observed, not signalled). */
async function eventually(check: () => boolean, what: string): Promise<void> {
  await within(10_000, check, what);
}

/** Every source of acme's serving runtime has taken its baseline and has no change detection in flight. */
async function settled(): Promise<void> {
  await Promise.all(gateway.app.tenants.serving.get('acme')!.catalog.sources.map((source) => source.settled?.()));
}

/** The next message `wanted` accepts, skipping others; each message is waited for at most 15 s. */
async function seen(
  stream: ListenStream,
  wanted: (message: Record<string, unknown>) => boolean = () => true,
): Promise<Record<string, unknown>> {
  for (;;) {
    const message = await stream.next(15_000);
    if (wanted(message)) return message;
  }
}

async function startAcme(): Promise<StartedGateway> {
  return startGateway({
    bootstrap: {
      configDir: docsRoot,
      document: {
        tenants: [
          {
            id: 'acme',
            auth: { issuers: [{ issuer: issuer.issuer, jwksUri: issuer.jwksUri }] },
            grants: [{ name: 'all', match: {}, allow: [{ source: 'docs' }] }],
            sources: [{ id: 'docs', type: 'files', root: docsRoot }],
          },
        ],
      },
    },
    env: {
      PUBLIC_URL,
      LISTEN_MAX_STREAMS_PER_PRINCIPAL: '2',
      LISTEN_KEEPALIVE_MS: '100',
      LISTEN_LIST_CHANGED_INTERVAL_MS: String(INTERVAL_MS),
    },
  });
}

beforeAll(async () => {
  issuer = await startLocalIssuer({ path: '/idp' });
  docsRoot = await mkdtemp(join(tmpdir(), 'gw-listen-life-'));
  await mkdir(join(docsRoot, 'pub'));
  await writeFile(join(docsRoot, 'pub', 'a.md'), '# A\n');
  gateway = await startAcme();
}, 60_000);

afterAll(async () => {
  for (const stream of opened) stream.close();
  await gateway?.close();
  await issuer?.close();
});

describe('subscriptions/listen lifetimes', () => {
  it('advertises listChanged and subscribe on server/discover only (the initialize era has no listen)', async () => {
    const discover = await mcpPost<{ result: { capabilities: unknown } }>(
      endpoint(),
      'server/discover',
      {},
      await bearer('ann'),
    );
    expect(discover.body.result.capabilities).toEqual({ resources: { listChanged: true, subscribe: true } });
    const legacy = await fetch(endpoint(), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(await bearer('ann')),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });
    const body = (await legacy.json()) as { result: { capabilities: { resources: Record<string, unknown> } } };
    expect(body.result.capabilities.resources).toEqual({ listChanged: false, subscribe: false });
  });

  it('sends keep-alive comments on an idle stream', async () => {
    const stream = await listen('ann', { resourcesListChanged: true });
    await stream.next();
    await stream.waitForComments(2);
    expect(stream.messages).toHaveLength(1);
    stream.close();
  });

  it('refuses a stream over the per-caller cap with a JSON-RPC error, and a killed client gives its place back', async () => {
    const first = await listen('ben', { resourcesListChanged: true });
    const second = await listen('ben', { resourcesListChanged: true });
    await first.next();
    await second.next();
    const third = await listen('ben', { resourcesListChanged: true });
    expect(third.status).toBe(429);
    expect(third.body).toMatchObject({
      id: 'l',
      error: { code: -32000, message: expect.stringContaining('at most 2 per caller') },
    });
    expect(validateErrorResponse('2026-07-28', third.body)).toEqual([]);
    // Another caller of the tenant is not affected.
    const other = await listen('cid', { resourcesListChanged: true });
    expect(other.status).toBe(200);
    other.close();
    await eventually(() => gateway.app.listenStreams.count('acme') === 2, "the other caller's stream freed");
    first.close();
    await eventually(() => gateway.app.listenStreams.count('acme') === 1, 'the killed stream freed');
    const again = await listen('ben', { resourcesListChanged: true });
    expect(again.status).toBe(200);
    second.close();
    again.close();
    await eventually(() => gateway.app.listenStreams.count() === 0, 'every stream freed');
  });

  it('counts an open stream on the gauge and its opening as one request, not its lifetime', async () => {
    const scrape = async () => parseExposition(await (await fetch(`${gateway.baseUrl}/metrics`)).text());
    const listens = (metrics: Awaited<ReturnType<typeof scrape>>) =>
      metrics.value('mcpgw_request_duration_seconds_count', { tenant: 'acme', method: 'subscriptions/listen' }) ?? 0;
    const before = await scrape();
    const stream = await listen('ida', { resourcesListChanged: true });
    await stream.next();
    const during = await scrape();
    expect(during.value('mcpgw_listen_streams')).toBe(1);
    expect(listens(during)).toBe(listens(before) + 1);
    stream.close();
    await eventually(() => gateway.app.listenStreams.count() === 0, 'the stream freed');
    const after = await scrape();
    expect(after.value('mcpgw_listen_streams')).toBe(0);
    expect(listens(after)).toBe(listens(during));
  });

  it('coalesces a burst into one list_changed per interval, the last change sent after the wait', async () => {
    const stream = await listen('dee', { resourcesListChanged: true, resourceSubscriptions: [PUB_A] });
    await stream.next();
    const burst = () => {
      for (let i = 0; i < 5; i += 1) {
        gateway.app.events.publish({
          type: 'source',
          tenantId: 'acme',
          sourceId: 'docs',
          change: { type: 'list-changed', uris: [PUB_A] },
        });
      }
    };
    const updated = () =>
      gateway.app.events.publish({
        type: 'source',
        tenantId: 'acme',
        sourceId: 'docs',
        change: { type: 'resource-updated', uri: PUB_A },
      });
    burst();
    updated();
    expect((await stream.next()).method).toBe('notifications/resources/list_changed');
    expect((await stream.next()).method).toBe('notifications/resources/updated');
    burst();
    // The trailing edge: one more (that it waits out the interval is checked on a fake clock,
    // apps/gateway/test/list-changed-interval.test.ts).
    expect((await stream.next()).method).toBe('notifications/resources/list_changed');
    updated();
    expect((await stream.next()).method).toBe('notifications/resources/updated');
    expect(stream.messages.map((message) => message.method)).toEqual([
      'notifications/subscriptions/acknowledged',
      'notifications/resources/list_changed',
      'notifications/resources/updated',
      'notifications/resources/list_changed',
      'notifications/resources/updated',
    ]);
    stream.close();
  });

  it('ends the stream with the completion when the token expires', async () => {
    const expiresIn = 2;
    const stream = await listen(
      'eve',
      { resourcesListChanged: true },
      { exp: Math.floor(Date.now() / 1000) + expiresIn },
    );
    await stream.next();
    const completion = await stream.next(expiresIn * 1000 + 3000);
    expect(completion).toEqual({
      jsonrpc: '2.0',
      id: 'l',
      result: {
        resultType: 'complete',
        _meta: {
          'io.modelcontextprotocol/subscriptionId': 'l',
          'io.modelcontextprotocol/serverInfo': expect.anything(),
        },
      },
    });
    expect(validateStreamMessage(completion)).toEqual([]);
    await stream.ended;
    await eventually(() => gateway.app.listenStreams.count() === 0, 'the expired stream freed');
  });

  it("delivers a real files source change through the bus (the gateway's own producers)", async () => {
    const stream = await listen('fay', { resourcesListChanged: true, resourceSubscriptions: [PUB_A] });
    await stream.next();
    // The watcher reports changes from its first scan on: wait for that scan, then change a file.
    await settled();
    await writeFile(join(docsRoot, 'pub', 'a.md'), '# A, changed\n');
    const updated = await seen(stream);
    expect(updated).toMatchObject({ method: 'notifications/resources/updated', params: { uri: PUB_A } });
    await settled();
    await writeFile(join(docsRoot, 'pub', 'new.md'), '# New\n');
    const listChanged = await seen(stream, (message) => message.method === 'notifications/resources/list_changed');
    expect(listChanged.method).toBe('notifications/resources/list_changed');
    for (const message of stream.messages) expect(validateStreamMessage(message)).toEqual([]);
    stream.close();
  });

  it('ends a stream with the completion once its tenant is no longer served', async () => {
    const own = await startAcme();
    try {
      const stream = await openListen(
        `${own.baseUrl}/t/acme/mcp`,
        { resourcesListChanged: true },
        { id: 6, headers: await bearer('hal') },
      );
      opened.push(stream);
      await stream.next();
      await own.app.tenants.remove('acme');
      own.app.events.publish({ type: 'configuration', tenantId: 'acme' });
      expect(await stream.next()).toMatchObject({ id: 6, result: { resultType: 'complete' } });
      await stream.ended;
      await eventually(() => own.app.listenStreams.count() === 0, 'the ended stream freed');
    } finally {
      await own.close();
    }
  });

  it('on shutdown sends every stream its completion, then closes, and the app closes promptly', async () => {
    const own = await startAcme();
    const stream = await openListen(
      `${own.baseUrl}/t/acme/mcp`,
      { resourcesListChanged: true },
      {
        id: 5,
        headers: await bearer('gus'),
      },
    );
    opened.push(stream);
    await stream.next();
    let closed = false;
    const closing = own.close().then(() => (closed = true));
    expect(await stream.next()).toMatchObject({ id: 5, result: { resultType: 'complete' } });
    await stream.ended;
    // Well within a pod's 30 s termination grace (a bound on the wait, not a speed claim): nothing waits on the stream.
    await within(15_000, () => closed, 'the app closed');
    await closing;
  });
});

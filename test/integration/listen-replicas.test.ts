import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WriteContext } from '@mcpgw/control-plane';
import { type ReplicaPair, startReplicaPair } from '@mcpgw/test-helpers/gateway-replicas';
import { withoutChangeFeeds } from '@mcpgw/test-helpers/without-change-feeds';
import { inspector } from '@mcpgw/test-helpers/redis';
import { type ListenStream, openListen } from '@mcpgw/test-helpers/sse-listen';
import { validateStreamMessage } from '@mcpgw/test-helpers/wire-schema';
import { within } from '@mcpgw/test-helpers/within';

// subscriptions/listen (MCP 2026-07-28, basic/patterns/subscriptions) across
// two gateway replicas sharing the test Redis and one control plane: real
// SSE streams on replica 1, changes caused through replica 2. Replica 1's
// sources have no change feed (withoutChangeFeeds), so a notification about a
// source change on its streams can only have come from replica 2 over Redis.
// Grant changes are each replica's own (it follows the control plane). Every
// message of every stream is validated against the 2026-07-28 schema.

const PUBLIC_URL = 'http://127.0.0.1:1';
const AUD = `${PUBLIC_URL}/t/acme/mcp`;
const SUB = 'io.modelcontextprotocol/subscriptionId';
const Q4 = 's3:///reports/q4.md';
const MARKER = 's3:///reports/marker.md';
const LIST_CHANGED = 'notifications/resources/list_changed';
const UPDATED = 'notifications/resources/updated';
const admin: WriteContext = { actor: { kind: 'tenant-admin', subject: 'ops' }, clientAddress: '127.0.0.1' };

let pair: ReplicaPair;
let redis: Redis;
let alice: ListenStream;
let bob: ListenStream;
const opened: ListenStream[] = [];
const one = () => pair.replicas[0].app;
const two = () => pair.replicas[1].app;

/** Resolves once the change detection of the replica's `acme` sources has a baseline and nothing in flight. */
async function sourcesSettled(app: FastifyInstance): Promise<void> {
  // Detection runs once the replica holds each watched source's lease (docs/adr/0010-one-replica-bus.md).
  const watched = JSON.stringify(app.events.watchedSources('acme'));
  await within(5000, async () => JSON.stringify(app.events.detectingSources('acme')) === watched);
  await Promise.all(app.tenants.serving.get('acme')!.catalog.sources.map((source) => source.settled?.()));
}

async function listen(sub: string, notifications: Record<string, unknown>, id: string): Promise<ListenStream> {
  const stream = await openListen(`${pair.replicas[0].baseUrl}/t/acme/mcp`, notifications, {
    id,
    headers: { authorization: `Bearer ${await pair.issuer.token({ sub, aud: AUD, scope: 'staff' })}` },
  });
  opened.push(stream);
  expect(stream.status).toBe(200);
  return stream;
}

const isMessage = (method: string, uri?: string) => (message: Record<string, unknown>) =>
  message.method === method && (uri === undefined || (message.params as { uri?: string }).uri === uri);

/** The next message on `stream` that matches, skipping others; rejects after `timeoutMs`. */
async function nextMatching(
  stream: ListenStream,
  match: (message: Record<string, unknown>) => boolean,
  timeoutMs = 10_000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const message = await stream.next(Math.max(1, deadline - Date.now()));
    if (match(message)) return message;
  }
}

/** Skips what has arrived so far: the next `next()` waits for a message yet to come. */
async function drain(stream: ListenStream): Promise<void> {
  for (;;) {
    try {
      await stream.next(1);
    } catch {
      return;
    }
  }
}

/**
 * Waits until everything replica 2 published so far has reached replica 1's
 * streams: Redis delivers one connection's messages in order, so once a
 * marker published after them arrives (a `list-changed` of the tables
 * source, which alice may see and bob may not), they have too.
 */
async function throughRedis(): Promise<void> {
  await two().tenantSync!.settled();
  await sourcesSettled(two());
  pair.buses[1].publish({
    type: 'source',
    tenantId: 'acme',
    sourceId: 'tables',
    change: { type: 'list-changed', uris: ['db+postgres:///tables/public/marker'] },
  });
  await nextMatching(alice, isMessage(LIST_CHANGED));
  await drain(alice);
  await drain(bob);
}

beforeAll(async () => {
  pair = await startReplicaPair({
    label: 'listen_replicas',
    buckets: ['reports'],
    env: { PUBLIC_URL, LISTEN_LIST_CHANGED_INTERVAL_MS: '0' },
    registries: [withoutChangeFeeds()],
    seed: async ({ sourceDb, s3 }) => {
      await sourceDb.sql('CREATE TABLE public.customers (id int PRIMARY KEY)');
      await s3.client.send(new PutObjectCommand({ Bucket: 'reports', Key: 'q4.md', Body: '# Q4' }));
      await s3.client.send(new PutObjectCommand({ Bucket: 'reports', Key: 'marker.md', Body: 'm' }));
    },
    tenants: ({ auth, sourceDb, s3 }) => [
      {
        id: 'acme',
        auth,
        grants: [
          { name: 'staff', match: { subjects: ['alice'] }, allow: [{ source: 'tables' }, { source: 'reports' }] },
          { name: 'readers', match: { subjects: ['bob'] }, allow: [{ source: 'reports' }] },
        ],
        sources: [
          {
            id: 'tables',
            type: 'postgres',
            connection: { url: sourceDb.url },
            schemas: ['public'],
            changeDetection: { mode: 'event-trigger' },
          },
          {
            id: 'reports',
            type: 's3',
            endpoint: s3.endpoint,
            forcePathStyle: true,
            bucket: 'reports',
            credentials: { accessKeyId: { $env: 'S3_KEY_ID' }, secretAccessKey: { $env: 'S3_SECRET' } },
            changeDetection: { mode: 'poll', intervalMs: 200 },
          },
        ],
      },
    ],
  });
  redis = inspector();
  await redis.connect();
}, 120_000);

afterAll(async () => {
  for (const stream of opened) stream.close();
  redis?.disconnect();
  await pair?.close();
});

describe('subscriptions/listen across two replicas', () => {
  it('opens streams on replica 1, which watches nothing itself; replica 2 watches the sources', async () => {
    alice = await listen('alice', { resourcesListChanged: true, resourceSubscriptions: [Q4] }, 'alice-1');
    bob = await listen('bob', { resourcesListChanged: true, resourceSubscriptions: [MARKER] }, 'bob-1');
    expect(await alice.next()).toMatchObject({
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { resourcesListChanged: true, resourceSubscriptions: [Q4] } },
    });
    expect(await bob.next()).toMatchObject({ method: 'notifications/subscriptions/acknowledged' });
    expect(one().events.watchedSources('acme')).toEqual([]);
    // Someone listens on replica 2 (as a stream there would), so it watches the tenant's sources.
    const stop = two().events.subscribe('acme', () => undefined);
    opened.push({ close: stop } as unknown as ListenStream);
    expect(two().events.watchedSources('acme')).toEqual(['tables', 'reports']);
  });

  it('sends list_changed on replica 1 for a table created in the tenant’s Postgres', async () => {
    await throughRedis();
    const receivedBefore = pair.buses[0].stats().received;
    await pair.sourceDb.sql('CREATE TABLE public.invoices (id int PRIMARY KEY)');
    await nextMatching(alice, isMessage(LIST_CHANGED));
    expect(pair.buses[0].stats().received).toBeGreaterThan(receivedBefore);
  });

  it('sends resources/updated on replica 1 for the subscribed S3 object overwritten', async () => {
    await throughRedis();
    await pair.s3.client.send(new PutObjectCommand({ Bucket: 'reports', Key: 'q4.md', Body: '# Q4, revised' }));
    expect(await nextMatching(alice, isMessage(UPDATED, Q4))).toMatchObject({
      params: { uri: Q4, _meta: { [SUB]: 'alice-1' } },
    });
  });

  it('sends list_changed only to the caller whose set a grant change through replica 2 shrinks', async () => {
    await throughRedis();
    const bobBefore = bob.messages.length;
    await two().controlPlane!.store.putEntity(admin, 'acme', 'grant', 'staff', {
      match: { subjects: ['alice'] },
      allow: [{ source: 'reports' }],
    });
    await nextMatching(alice, isMessage(LIST_CHANGED));
    await one().tenantSync!.settled();
    // The marker: an update of the one URI bob subscribed to, published on replica 2 after the
    // grant change was applied on replica 1, so it reaches bob after anything the change caused.
    pair.buses[1].publish({
      type: 'source',
      tenantId: 'acme',
      sourceId: 'reports',
      change: { type: 'resource-updated', uri: MARKER },
    });
    await nextMatching(bob, isMessage(UPDATED, MARKER));
    expect(bob.messages.slice(bobBefore).map((message) => message.method)).toEqual([UPDATED]);
  });

  it('sends list_changed (and updated for subscriptions) after replica 1’s bus connection to Redis is killed', async () => {
    const name = pair.buses[0].subscriberName;
    const idOf = async () =>
      String(await redis.client('LIST'))
        .split('\n')
        .find((line: string) => line.includes(` name=${name} `))
        ?.match(/^id=(\d+)/)?.[1];
    const killed = await idOf();
    expect(killed).toBeDefined();
    await drain(alice);
    await drain(bob);
    // Only that connection: the shared Redis and every other client stay up.
    expect(await redis.client('KILL', 'ID', killed!)).toBe(1);
    await nextMatching(alice, isMessage(LIST_CHANGED));
    await nextMatching(alice, isMessage(UPDATED, Q4));
    await nextMatching(bob, isMessage(LIST_CHANGED));
    const reconnected = await idOf();
    expect(reconnected).toBeDefined();
    expect(reconnected).not.toBe(killed);
  });

  it('sent only messages valid against the 2026-07-28 schema, each tagged with its stream’s id', () => {
    for (const [stream, id] of [
      [alice, 'alice-1'],
      [bob, 'bob-1'],
    ] as const) {
      expect(stream.messages.length).toBeGreaterThan(1);
      for (const message of stream.messages) {
        expect(validateStreamMessage(message)).toEqual([]);
        expect(((message.params ?? message.result) as { _meta?: Record<string, unknown> })._meta?.[SUB]).toBe(id);
      }
    }
  });
});

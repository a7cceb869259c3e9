import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WriteContext } from '@mcpgw/control-plane';
import type { RedisTenantEventBus, TenantEvent } from '@mcpgw/gateway/testing';
import type { StartedGateway } from '@mcpgw/test-helpers/gateway';
import { type ReplicaPair, startReplicaPair } from '@mcpgw/test-helpers/gateway-replicas';
import type { TestDatabase } from '@mcpgw/test-helpers/postgres';
import { inspector } from '@mcpgw/test-helpers/redis';
import type { S3rverHandle } from '@mcpgw/test-helpers/s3rver';
import { collectEvents } from '@mcpgw/test-helpers/tenant-event-collector';
import { within } from '@mcpgw/test-helpers/within';

// Two gateway replicas sharing the test Redis (their own channel namespace)
// and one control plane on the real Postgres. Replica 2 has a listener, so it
// watches the tenant's sources; replica 1's listener sits on its bus alone,
// so replica 1 watches nothing and whatever `source` event reaches it came
// from replica 2 over Redis. Configuration changes are each replica's own
// (it hears the control plane itself) and reach replica 1's app listeners.

const admin: WriteContext = { actor: { kind: 'tenant-admin', subject: 'alice' }, clientAddress: '127.0.0.1' };

let pair: ReplicaPair;
let sourceDb: TestDatabase;
let s3: S3rverHandle;
let redis: Redis;
let namespace: string;
let buses: readonly RedisTenantEventBus[];
let replicas: readonly StartedGateway[];

const isSource = (sourceId: string, type: string) => (event: TenantEvent) =>
  event.type === 'source' && event.sourceId === sourceId && event.change.type === type;
const updatedUri = (event: TenantEvent) =>
  event.type === 'source' && event.change.type === 'resource-updated' ? event.change.uri : undefined;

/** Resolves once the change detection of the replica's `acme` sources has a baseline and nothing in flight. */
async function sourcesSettled(app: FastifyInstance): Promise<void> {
  // Detection runs once the replica holds each watched source's lease (docs/adr/0010-one-replica-bus.md).
  const watched = JSON.stringify(app.events.watchedSources('acme'));
  await within(5000, async () => JSON.stringify(app.events.detectingSources('acme')) === watched);
  await Promise.all(app.tenants.serving.get('acme')!.catalog.sources.map((source) => source.settled?.()));
}

beforeAll(async () => {
  pair = await startReplicaPair({
    label: 'events',
    buckets: ['reports'],
    seed: async (services) => {
      await services.sourceDb.sql('CREATE TABLE public.customers (id int PRIMARY KEY)');
    },
    tenants: ({ auth, sourceDb: db, s3: s3rver }) => [
      {
        id: 'acme',
        auth,
        grants: [{ name: 'staff', match: { scopes: ['staff'] }, allow: [{ source: 'tables' }] }],
        sources: [
          {
            id: 'tables',
            type: 'postgres',
            connection: { url: db.url },
            schemas: ['public'],
            changeDetection: { mode: 'event-trigger' },
          },
          {
            id: 'reports',
            type: 's3',
            endpoint: s3rver.endpoint,
            forcePathStyle: true,
            bucket: 'reports',
            credentials: { accessKeyId: { $env: 'S3_KEY_ID' }, secretAccessKey: { $env: 'S3_SECRET' } },
            changeDetection: { mode: 'poll', intervalMs: 200 },
          },
          { id: 'notes', type: 'static', resources: [{ uri: 'note://a', name: 'a', text: 'A' }] },
        ],
      },
      {
        id: 'beta',
        auth,
        grants: [{ name: 'all', match: {}, allow: [{ source: 'notes' }] }],
        sources: [{ id: 'notes', type: 'static', resources: [{ uri: 'note://b', name: 'b', text: 'B' }] }],
      },
    ],
  });
  ({ sourceDb, s3, namespace, buses, replicas } = pair);
  redis = inspector();
  await redis.connect();
}, 120_000);

afterAll(async () => {
  redis?.disconnect();
  await pair?.close();
});

describe('tenant events across two replicas', () => {
  const [one, two] = [() => replicas[0]!.app, () => replicas[1]!.app];
  const onOne = collectEvents<TenantEvent>();
  const betaOnOne = collectEvents<TenantEvent>();
  const stops: (() => void)[] = [];

  it('watches a tenant’s sources only on the replica that has a listener for it', async () => {
    stops.push(buses[0]!.subscribe('acme', onOne.listener), buses[0]!.subscribe('beta', betaOnOne.listener));
    expect(two().events.watchedSources('acme')).toEqual([]);
    stops.push(two().events.subscribe('acme', () => undefined));
    // The static source has no change feed.
    expect(two().events.watchedSources('acme')).toEqual(['tables', 'reports']);
    expect(one().events.watchedSources('acme')).toEqual([]);
  });

  it('carries a table created in the tenant’s Postgres to a listener on the other replica', async () => {
    const from = onOne.events.length;
    await sourcesSettled(two());
    await sourceDb.sql('CREATE TABLE public.invoices (id int PRIMARY KEY)');
    await onOne.next(isSource('tables', 'list-changed'), 10_000, from);
    const uri = await onOne.next((event) => updatedUri(event)?.endsWith('/public/invoices') === true, 10_000, from);
    expect(updatedUri(uri)).toBe('db+postgres:///tables/public/invoices');
  });

  it('carries an S3 object written to a listener on the other replica', async () => {
    const from = onOne.events.length;
    await sourcesSettled(two());
    await s3.client.send(new PutObjectCommand({ Bucket: 'reports', Key: 'q4.md', Body: '# Q4' }));
    await onOne.next(isSource('reports', 'list-changed'), 10_000, from);
    await onOne.next((event) => updatedUri(event) === 's3:///reports/q4.md', 10_000, from);
  });

  it('tells the other replica’s listeners `configuration` when a grant changes through the control plane', async () => {
    const onOneApp = collectEvents<TenantEvent>();
    const stop = one().events.subscribe('acme', onOneApp.listener);
    const servedBefore = one().tenants.serving.get('acme');
    await two().controlPlane!.store.putEntity(admin, 'acme', 'grant', 'readers', {
      match: {},
      allow: [{ source: 'reports' }],
    });
    await onOneApp.next((event) => event.type === 'configuration', 5000);
    // Told once the new runtime serves, not before.
    expect(one().tenants.serving.get('acme')).not.toBe(servedBefore);
    expect(onOneApp.events.filter((event) => event.type === 'configuration')).toHaveLength(1);
    stop();
    expect(one().events.watchedSources('acme')).toEqual([]);
  });

  it('watches the new runtime’s sources after a change, on the replica that listens', async () => {
    await two().tenantSync!.settled();
    expect(two().events.watchedSources('acme')).toEqual(['tables', 'reports']);
    // Replica 1 watches nothing, and replica 2's previous runtime has closed its sources (no
    // request holds it): the event can only come from replica 2's new runtime.
    expect(one().events.watchedSources('acme')).toEqual([]);
    const from = onOne.events.length;
    await sourcesSettled(two());
    await s3.client.send(new PutObjectCommand({ Bucket: 'reports', Key: 'q5.md', Body: '# Q5' }));
    await onOne.next((event) => updatedUri(event) === 's3:///reports/q5.md', 10_000, from);
  });

  it('tells every replica `configuration` when a tenant’s caches are flushed', async () => {
    const from = onOne.events.length;
    await two().cache.invalidateTenant('acme');
    await onOne.next((event) => event.type === 'configuration', 5000, from);
  });

  it('never tells a listener of one tenant about another', async () => {
    await two().cache.invalidateTenant('beta');
    await betaOnOne.next((event) => event.type === 'configuration', 5000);
    expect(betaOnOne.events).toEqual([{ type: 'configuration', tenantId: 'beta' }]);
    expect(onOne.events.every((event) => event.tenantId === 'acme')).toBe(true);
  });

  it('stops watching and releases the channels once the last listeners leave', async () => {
    for (const stop of stops.splice(0)) stop();
    expect(two().events.watchedSources('acme')).toEqual([]);
    await within(
      10_000,
      async () => expect(await redis.pubsub('CHANNELS', `${namespace}:events:*`)).toEqual([]),
      'the channels released after the last listener left',
    );
  });
});

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WriteContext } from '@mcpgw/control-plane';
import type { TenantEvent } from '@mcpgw/gateway/testing';
import { createSourceRegistry } from '@mcpgw/gateway/testing';
import { startGateway } from '@mcpgw/test-helpers/gateway';
import { type LocalIssuer, startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { mcpPost } from '@mcpgw/test-helpers/mcp-http';
import { type TestDatabase, createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { collectEvents } from '@mcpgw/test-helpers/tenant-event-collector';
import { within } from '@mcpgw/test-helpers/within';

// Two gateway replicas on one Postgres control plane and no Redis (the Helm
// chart renders this): the replica bus rides Postgres LISTEN/NOTIFY
// (docs/adr/0012-one-bus-two-transports.md). An admin write through one
// replica is served by the other; a cache flush on one empties the other's
// in-process cache; and a table created in a tenant's Postgres is detected
// by the one replica holding the source's lease (an advisory lock) and heard
// once by a listener on each, so the other's `source` event crossed over
// Postgres.

const PUBLIC_URL = 'http://127.0.0.1:1';
const ENDPOINT_AUD = `${PUBLIC_URL}/t/acme/mcp`;
const admin: WriteContext = { actor: { kind: 'tenant-admin', subject: 'alice' }, clientAddress: '127.0.0.1' };
const BOUND_MS = 5000;

let controlDb: TestDatabase;
let sourceDb: TestDatabase;
let issuer: LocalIssuer;
const replicas: { app: FastifyInstance; endpoint: string }[] = [];
const one = () => replicas[0]!.app;
const two = () => replicas[1]!.app;

async function listNames(endpoint: string, token: string): Promise<string[]> {
  const result = await mcpPost<{ result?: { resources: { name: string }[] } }>(
    endpoint,
    'resources/list',
    {},
    { authorization: `Bearer ${token}` },
  );
  expect(result.status).toBe(200);
  return (result.body.result?.resources ?? []).map((resource) => resource.name).sort();
}

beforeAll(async () => {
  [controlDb, sourceDb, issuer] = await Promise.all([
    createTestDatabase('pg_bus_control'),
    createTestDatabase('pg_bus_source'),
    startLocalIssuer({ path: '/acme-idp' }),
  ]);
  await sourceDb.sql('CREATE SCHEMA frozen; CREATE TABLE frozen.a (id int PRIMARY KEY)');
  await sourceDb.sql('CREATE TABLE public.customers (id int PRIMARY KEY)');
  const configPath = join(await mkdtemp(join(tmpdir(), 'gw-pg-bus-')), 'gateway.json');
  await writeFile(
    configPath,
    JSON.stringify({
      tenants: [
        {
          id: 'acme',
          auth: { issuers: [{ issuer: issuer.issuer, jwksUri: issuer.jwksUri }] },
          grants: [{ name: 'staff', match: { scopes: ['staff'] }, allow: [{ source: 'frozen' }] }],
          sources: [
            // Never re-read on its own: only an invalidation shows a new table.
            {
              id: 'frozen',
              type: 'postgres',
              connection: { url: sourceDb.url },
              schemas: ['frozen'],
              changeDetection: { mode: 'off' },
            },
            {
              id: 'tables',
              type: 'postgres',
              connection: { url: sourceDb.url },
              schemas: ['public'],
              changeDetection: { mode: 'event-trigger' },
            },
          ],
        },
      ],
    }),
  );
  // One after the other: the first applies the bootstrap file to the empty control plane.
  for (let i = 0; i < 2; i += 1) {
    const { app, baseUrl } = await startGateway({
      configPath,
      registry: createSourceRegistry(),
      env: {
        PUBLIC_URL,
        DATABASE_URL: controlDb.url,
        SECRETS_KEY: 'a shared server secret of at least thirty-two characters',
      },
    });
    replicas.push({ app, endpoint: `${baseUrl}/t/acme/mcp` });
  }
}, 120_000);

afterAll(async () => {
  await Promise.all(replicas.map((replica) => replica.app.close()));
  await issuer?.close();
  await sourceDb?.drop();
  await controlDb?.drop();
});

describe('replicas on a Postgres control plane without Redis', () => {
  it('ride the Postgres transport, each caching in process', () => {
    for (const app of [one(), two()]) {
      expect(app.redis).toBeUndefined();
      expect(app.replicaBus.transport).toBe('postgres');
      expect(app.gatewayCache.kind).toBe('memory');
    }
  });

  it('serve an admin write made through one replica on the other', async () => {
    const token = await issuer.token({ sub: 'bob', aud: ENDPOINT_AUD, scope: 'other' });
    expect(await listNames(replicas[1]!.endpoint, token)).toEqual([]);
    await one().controlPlane.store.putEntity(admin, 'acme', 'grant', 'everyone', {
      match: {},
      allow: [{ source: 'frozen' }],
    });
    await within(
      BOUND_MS,
      async () => expect(await listNames(replicas[1]!.endpoint, token)).toContain('frozen.a'),
      'the new grant served on replica 2',
    );
  });

  it('empty the other replica’s cache when one replica flushes a tenant', async () => {
    const token = await issuer.token({ sub: 'bob', aud: ENDPOINT_AUD, scope: 'staff' });
    const before = await listNames(replicas[1]!.endpoint, token);
    await sourceDb.sql('CREATE TABLE frozen.b (id int PRIMARY KEY)');
    // Replica 2 still serves what it cached: nothing told it of the new table.
    expect(await listNames(replicas[1]!.endpoint, token)).toEqual(before);
    await one().cache.invalidateTenant('acme');
    await within(
      BOUND_MS,
      async () => expect(await listNames(replicas[1]!.endpoint, token)).toEqual([...before, 'frozen.b'].sort()),
      'the new table listed on replica 2',
    );
  });

  it('detect a source change on one replica, and a listener on each hears it once', async () => {
    const [onOne, onTwo] = [collectEvents<TenantEvent>(), collectEvents<TenantEvent>()];
    const stops = [one().events.subscribe('acme', onOne.listener), two().events.subscribe('acme', onTwo.listener)];
    try {
      // Both watch the source; the one holding its lease detects.
      expect(one().events.watchedSources('acme')).toEqual(['tables']);
      expect(two().events.watchedSources('acme')).toEqual(['tables']);
      const detecting = () => [one(), two()].map((app) => app.events.detectingSources('acme'));
      await within(BOUND_MS, () => expect(detecting().flat()).toEqual(['tables']));
      const [holder, follower, onFollower] =
        detecting()[0]!.length === 1 ? [one(), two(), onTwo] : [two(), one(), onOne];
      for (const app of [holder, follower]) {
        await Promise.all(app.tenants.serving.get('acme')!.catalog.sources.map((source) => source.settled?.()));
      }
      const from = [onOne.events.length, onTwo.events.length];
      await sourceDb.sql('CREATE TABLE public.invoices (id int PRIMARY KEY)');
      const event = await onFollower.next(
        (candidate) => candidate.type === 'source' && candidate.change.type === 'list-changed',
        10_000,
      );
      expect(event).toMatchObject({ tenantId: 'acme', sourceId: 'tables' });
      expect(detecting()).toEqual(holder === one() ? [['tables'], []] : [[], ['tables']]);
      // A flush from each replica travels behind whatever it published before: once a listener heard
      // both, nothing of the change is still on its way to it.
      for (const app of [holder, follower]) {
        await Promise.all(app.tenants.serving.get('acme')!.catalog.sources.map((source) => source.settled?.()));
      }
      await one().cache.invalidateTenant('acme');
      await two().cache.invalidateTenant('acme');
      const heardOn = [onOne, onTwo].map((heard, index) => {
        const since = () => heard.events.slice(from[index]);
        return {
          since,
          sources: () =>
            since()
              .filter((candidate) => candidate.type === 'source')
              .map((e) => JSON.stringify(e)),
        };
      });
      for (const { since } of heardOn) {
        await within(BOUND_MS, () =>
          expect(since().filter((candidate) => candidate.type === 'configuration').length).toBeGreaterThanOrEqual(2),
        );
      }
      // The change (a list change and the new table's update) once each, the same on both replicas.
      const [sourcesOne, sourcesTwo] = heardOn.map(({ sources }) => sources());
      expect(sourcesOne).toContain(JSON.stringify(event));
      expect(new Set(sourcesOne).size).toBe(sourcesOne!.length);
      expect(sourcesTwo).toEqual(sourcesOne);
    } finally {
      for (const stop of stops) stop();
    }
  });
});

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
import { withoutChangeFeeds } from '@mcpgw/test-helpers/without-change-feeds';

// Two gateway replicas on one Postgres control plane and no Redis (the Helm
// chart renders this): the replica bus rides Postgres LISTEN/NOTIFY
// (docs/adr/0012-one-bus-two-transports.md). An admin write through one
// replica is served by the other; a cache flush on one empties the other's
// in-process cache; and a table created in a tenant's Postgres reaches a
// listener on the replica that watches nothing itself (its sources have no
// change feeds), so the `source` event crossed over Postgres.

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
  for (const registry of [withoutChangeFeeds(), createSourceRegistry()]) {
    const { app, baseUrl } = await startGateway({
      configPath,
      registry,
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

  it('carry a source change detected on one replica to a listener on the other', async () => {
    const heard = collectEvents<TenantEvent>();
    const stops = [one().events.subscribe('acme', heard.listener), two().events.subscribe('acme', () => undefined)];
    try {
      // Replica 1's sources have no change feeds: whatever `source` event it hears came from replica 2.
      expect(one().events.watchedSources('acme')).toEqual([]);
      expect(two().events.watchedSources('acme')).toEqual(['tables']);
      await within(BOUND_MS, () => expect(two().events.detectingSources('acme')).toEqual(['tables']));
      await Promise.all(
        two()
          .tenants.serving.get('acme')!
          .catalog.sources.map((source) => source.settled?.()),
      );
      await sourceDb.sql('CREATE TABLE public.invoices (id int PRIMARY KEY)');
      const event = await heard.next(
        (candidate) => candidate.type === 'source' && candidate.change.type === 'list-changed',
        10_000,
      );
      expect(event).toMatchObject({ tenantId: 'acme', sourceId: 'tables' });
    } finally {
      for (const stop of stops) stop();
    }
  });
});

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WriteContext } from '@mcpgw/control-plane';
import { type LocalIssuer, startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { mcpPost } from '@mcpgw/test-helpers/mcp-http';
import { type TestDatabase, createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { startGateway } from '@mcpgw/test-helpers/gateway';
import { within } from '@mcpgw/test-helpers/within';

// Two gateway replicas serving from one control plane on the real Postgres:
// a change committed through one replica's store is served by the other
// (LISTEN/NOTIFY; how soon is measured by bench/tenant-propagation.ts), a grant removed takes its resources with
// it, and a change with a source that cannot start is applied all the same
// (the source serves as unavailable).

const PUBLIC_URL = 'http://127.0.0.1:1';
const ENDPOINT_AUD = `${PUBLIC_URL}/t/acme/mcp`;
const admin: WriteContext = { actor: { kind: 'tenant-admin', subject: 'alice' }, clientAddress: '127.0.0.1' };

/**
 * How long a change may take to reach the other replica: generous for a busy machine. There is no
 * periodic reconcile (docs/adr/0010-one-replica-bus.md), so only the notification can have told it.
 */
const BOUND_MS = 5000;

let database: TestDatabase;
let issuer: LocalIssuer;
let configPath: string;
const replicas: { app: FastifyInstance; endpoint: string }[] = [];

async function startReplica(): Promise<{ app: FastifyInstance; endpoint: string }> {
  const { app, baseUrl } = await startGateway({
    configPath,
    env: {
      PUBLIC_URL,
      DATABASE_URL: database.url,
      SECRETS_KEY: 'a shared server secret of at least thirty-two characters',
    },
  });
  return { app, endpoint: `${baseUrl}/t/acme/mcp` };
}

async function listNames(endpoint: string, token: string): Promise<{ status: number; names: string[] }> {
  const result = await mcpPost<{ result?: { resources: { name: string }[] } }>(
    endpoint,
    'resources/list',
    {},
    { authorization: `Bearer ${token}` },
  );
  return { status: result.status, names: (result.body.result?.resources ?? []).map((r) => r.name) };
}

beforeAll(async () => {
  database = await createTestDatabase('control_plane_replicas');
  issuer = await startLocalIssuer({ path: '/acme-idp' });
  configPath = join(await mkdtemp(join(tmpdir(), 'gw-cp-config-')), 'gateway.json');
  await writeFile(
    configPath,
    JSON.stringify({
      tenants: [
        {
          id: 'acme',
          auth: { issuers: [{ issuer: issuer.issuer, jwksUri: issuer.jwksUri }] },
          grants: [{ name: 'staff', match: { scopes: ['staff'] }, allow: [{ source: 'notes' }] }],
          sources: [{ id: 'notes', type: 'static', resources: [{ uri: 'note://a', name: 'a', text: 'A' }] }],
        },
      ],
    }),
  );
  replicas.push(await startReplica(), await startReplica());
}, 120_000);

afterAll(async () => {
  await Promise.all(replicas.map((replica) => replica.app.close()));
  await issuer?.close();
  await database?.drop();
});

describe('replicas following one control plane', () => {
  it('serves the bootstrap file from the store on both replicas', async () => {
    const token = await issuer.token({ sub: 'bob', aud: ENDPOINT_AUD, scope: 'staff' });
    for (const replica of replicas)
      expect(await listNames(replica.endpoint, token)).toEqual({ status: 200, names: ['a'] });
    expect((await replicas[0]!.app.controlPlane!.store.getTenant('acme'))?.managedBy).toBe('bootstrap');
  });

  it('serves a source and grant added through one replica on the other', async () => {
    const token = await issuer.token({ sub: 'bob', aud: ENDPOINT_AUD, scope: 'staff' });
    const store = replicas[0]!.app.controlPlane!.store;
    await store.putEntity(admin, 'acme', 'source', 'more', {
      type: 'static',
      resources: [{ uri: 'note://b', name: 'b', text: 'B' }],
    });
    await store.putEntity(admin, 'acme', 'grant', 'more-readers', { match: {}, allow: [{ source: 'more' }] });
    await within(
      BOUND_MS,
      async () => expect((await listNames(replicas[1]!.endpoint, token)).names).toContain('b'),
      "'b' on replica 2",
    );
    expect((await listNames(replicas[1]!.endpoint, token)).names).toEqual(['a', 'b']);
  });

  it('removes the resources of a deleted grant', async () => {
    const token = await issuer.token({ sub: 'carol', aud: ENDPOINT_AUD, scope: 'other' });
    expect((await listNames(replicas[1]!.endpoint, token)).names).toEqual(['b']);
    await replicas[0]!.app.controlPlane!.store.deleteEntity(admin, 'acme', 'grant', 'more-readers');
    await within(
      BOUND_MS,
      async () => expect((await listNames(replicas[1]!.endpoint, token)).names).toEqual([]),
      'no names on replica 2',
    );
  });

  it('applies a change whose source cannot start, serving that source as unavailable, and says why on the status', async () => {
    const token = await issuer.token({ sub: 'bob', aud: ENDPOINT_AUD, scope: 'staff' });
    await replicas[0]!.app.controlPlane!.store.putEntity(admin, 'acme', 'source', 'broken', {
      type: 'files',
      root: '/no/such/folder/anywhere',
    });
    const revision = (await replicas[0]!.app.controlPlane!.store.getTenant('acme'))!.revision;
    await within(
      BOUND_MS,
      () => expect(replicas[1]!.app.tenants.status('acme')?.appliedRevision).toBe(revision),
      'the revision applied on replica 2',
    );
    expect(replicas[1]!.app.tenants.status('acme')).toMatchObject({ servingRevision: revision });
    expect(replicas[1]!.app.tenants.status('acme')?.lastError).toBeUndefined();
    expect(replicas[1]!.app.tenants.serving.get('acme')?.failedSources.get('broken')).toContain("source 'broken'");
    expect(await listNames(replicas[1]!.endpoint, token)).toEqual({ status: 200, names: ['a'] });
    await replicas[0]!.app.controlPlane!.store.deleteEntity(admin, 'acme', 'source', 'broken');
    await within(
      BOUND_MS,
      () => expect(replicas[1]!.app.tenants.serving.get('acme')?.failedSources.size).toBe(0),
      'no failed source on replica 2',
    );
  });

  it('stops serving a suspended tenant on every replica (404, like a tenant that does not exist)', async () => {
    const token = await issuer.token({ sub: 'bob', aud: ENDPOINT_AUD, scope: 'staff' });
    await replicas[0]!.app.controlPlane!.store.updateTenant(admin, 'acme', { status: 'suspended' });
    for (const replica of replicas)
      await within(
        BOUND_MS,
        async () => expect((await listNames(replica.endpoint, token)).status).toBe(404),
        'suspended: 404',
      );
    await replicas[0]!.app.controlPlane!.store.updateTenant(admin, 'acme', { status: 'active' });
    for (const replica of replicas)
      await within(
        BOUND_MS,
        async () => expect((await listNames(replica.endpoint, token)).status).toBe(200),
        'active again: 200',
      );
  });
});

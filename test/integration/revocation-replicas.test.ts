import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCacheKeys } from '@mcpgw/cache';
import type { WriteContext } from '@mcpgw/control-plane';
import { type StartedGateway, startGateway } from '@mcpgw/test-helpers/gateway';
import { type LocalIssuer, startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { mcpPost } from '@mcpgw/test-helpers/mcp-http';
import { type TestDatabase, createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { inspector, redisUrl, requireRedis } from '@mcpgw/test-helpers/redis';
import { within } from '@mcpgw/test-helpers/within';
import { createServerKeys } from '@mcpgw/core';

// A revocation never fails open. Two replicas share the real Postgres control
// plane and the real Redis cache. A committed change to grants or issuers is
// served by both as soon as they apply it even when one of the tenant's
// sources cannot open (a `files` folder that went away): the source serves as
// unavailable inside the new runtime rather than the old runtime serving on
// with the revoked grant. A tenant whose stored configuration cannot be built
// is not served at all. A replica still on an old revision can neither plant
// its results in the cache for the up-to-date replica nor read them from it,
// and deleting a tenant leaves nothing of it in Redis or the control plane
// but its audit trail.

const PUBLIC_URL = 'http://127.0.0.1:1';
/** Its own id: the rate counters' Redis keys name the tenant in clear, and other tests use `acme`. */
const TENANT = 'revoking-acme';
const AUD = `${PUBLIC_URL}/t/${TENANT}/mcp`;
const SECRETS_KEY = randomBytes(24).toString('base64url');
const admin: WriteContext = { actor: { kind: 'operator', subject: 'ops' }, clientAddress: '127.0.0.1' };

interface Listing {
  status: number;
  names: string[];
  unavailable: string[] | undefined;
}

/**
 * How long a committed change may take to be applied by a replica: generous for a busy machine. There
 * is no periodic reconcile (docs/adr/0010-one-replica-bus.md), so it is the change signal that told
 * it. How soon, against the 1 s
 * target, is measured by bench/revocation-propagation.ts.
 */
const BOUND_MS = 5000;

let database: TestDatabase;
let idpA: LocalIssuer;
let idpB: LocalIssuer;
let folder: string;
let configPath: string;
let replicas: StartedGateway[] = [];

const endpoint = (replica: StartedGateway, tenant = TENANT) => `${replica.baseUrl}/t/${tenant}/mcp`;
const store = () => replicas[0]!.app.controlPlane!.store;

async function list(replica: StartedGateway, token: string): Promise<Listing> {
  const result = await mcpPost<{ result?: { resources: { name: string }[]; _meta?: Record<string, unknown> } }>(
    endpoint(replica),
    'resources/list',
    {},
    { authorization: `Bearer ${token}` },
  );
  return {
    status: result.status,
    names: (result.body.result?.resources ?? []).map((resource) => resource.name).sort(),
    unavailable: result.body.result?._meta?.['dev.mcpgw/unavailableSources'] as string[] | undefined,
  };
}

async function read(replica: StartedGateway, token: string, uri: string) {
  return mcpPost<{ result?: unknown; error?: { code: number; message: string } }>(
    endpoint(replica),
    'resources/read',
    { uri },
    { authorization: `Bearer ${token}` },
  );
}

async function startReplicas(): Promise<StartedGateway[]> {
  const started: StartedGateway[] = [];
  // One after the other: the first applies the bootstrap file to the empty control plane.
  for (let i = 0; i < 2; i += 1) {
    started.push(
      await startGateway({
        configPath,
        env: { PUBLIC_URL, DATABASE_URL: database.url, REDIS_URL: redisUrl(), SECRETS_KEY },
      }),
    );
  }
  return started;
}

/** Every Redis key of the tenant's cache (its hash tag under the gateway's namespace). */
async function tenantKeys(tenantId: string): Promise<string[]> {
  const prefix = createCacheKeys({ key: createServerKeys({ secretsKey: SECRETS_KEY }).cacheKey }).tenantPrefix(
    tenantId,
  );
  const client = inspector();
  await client.connect();
  try {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, found] = await client.scan(
        cursor,
        'MATCH',
        `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`,
        'COUNT',
        1000,
      );
      cursor = next;
      keys.push(...found);
    } while (cursor !== '0');
    return keys;
  } finally {
    client.disconnect();
  }
}

/**
 * The rate counters of the tenant and of its callers (the default `mcpgw:rl:` prefix), which name
 * the tenant by its keyed tag; and any counter key that names it in the clear, which must not exist.
 */
async function rateKeys(tenantId: string): Promise<string[]> {
  const tag = createCacheKeys({ key: createServerKeys({ secretsKey: SECRETS_KEY }).cacheKey }).tenantTag(tenantId);
  const client = inspector();
  await client.connect();
  try {
    const own = await client.exists(`mcpgw:rl:tenant:${tag}`);
    const callers = await client.keys(`mcpgw:rl:principal:${tag}:*`);
    const inTheClear = await client.keys(`mcpgw:rl:*${tenantId}*`);
    return [...(own === 1 ? [`mcpgw:rl:tenant:${tag}`] : []), ...callers, ...inTheClear];
  } finally {
    client.disconnect();
  }
}

beforeAll(async () => {
  await requireRedis();
  database = await createTestDatabase('revocation_replicas');
  idpA = await startLocalIssuer({ path: '/idp-a' });
  idpB = await startLocalIssuer({ path: '/idp-b' });
  folder = await mkdtemp(join(tmpdir(), 'gw-shelf-'));
  await mkdir(join(folder, 'shelf'));
  await writeFile(join(folder, 'shelf', 'guide.txt'), 'a guide');
  configPath = join(await mkdtemp(join(tmpdir(), 'gw-revocation-config-')), 'gateway.json');
  await writeFile(
    configPath,
    JSON.stringify({
      tenants: [
        {
          id: TENANT,
          // Loopback callers are counted only against a tenant's own limits: these make counters to delete.
          limits: { requestsPerMinute: 100_000, perPrincipalPerMinute: 100_000 },
          auth: {
            issuers: [
              { issuer: idpA.issuer, jwksUri: idpA.jwksUri },
              { issuer: idpB.issuer, jwksUri: idpB.jwksUri },
            ],
          },
          grants: [
            { name: 'staff', match: { scopes: ['staff'] }, allow: [{ source: 'notes', uris: ['note://public'] }] },
            {
              name: 'secret-readers',
              match: { scopes: ['staff'] },
              allow: [{ source: 'notes', uris: ['note://secret'] }],
            },
            { name: 'shelf-readers', match: { scopes: ['staff'] }, allow: [{ source: 'shelf' }] },
          ],
          sources: [
            {
              id: 'notes',
              type: 'static',
              ttlMs: { list: 60_000, read: 60_000 },
              resources: [
                { uri: 'note://public', name: 'public', text: 'for everyone' },
                { uri: 'note://secret', name: 'secret', text: 'for the secret readers' },
              ],
            },
            { id: 'shelf', type: 'files', root: join(folder, 'shelf') },
          ],
        },
      ],
    }),
  );
  replicas = await startReplicas();
}, 120_000);

afterAll(async () => {
  await Promise.all(replicas.map((replica) => replica.close()));
  await Promise.all([idpA?.close(), idpB?.close()]);
  await database?.drop();
  await rm(folder, { recursive: true, force: true });
});

describe('a revocation while a source cannot open', () => {
  it('stops serving a deleted grant at once on both replicas, reporting the broken source as unavailable', async () => {
    const token = await idpA.token({ sub: 'bob', aud: AUD, scope: 'staff' });
    for (const replica of replicas) {
      // Twice: the second answer comes from the cache, which the revocation must not keep alive either.
      await list(replica, token);
      const listed = await list(replica, token);
      expect(listed.status).toBe(200);
      expect(listed.names).toEqual(expect.arrayContaining(['guide.txt', 'public', 'secret']));
      expect(listed.unavailable).toBeUndefined();
    }
    // The folder goes away, then the grant is revoked: the new runtime cannot open the files source.
    await rm(join(folder, 'shelf'), { recursive: true, force: true });
    await store().deleteEntity(admin, TENANT, 'grant', 'secret-readers');
    const revision = (await store().getTenant(TENANT))!.revision;
    for (const replica of replicas) {
      await within(
        BOUND_MS,
        async () => expect((await list(replica, token)).names).not.toContain('secret'),
        'secret revoked',
      );
      expect(await list(replica, token)).toEqual({ status: 200, names: ['public'], unavailable: ['shelf'] });
      expect(replica.app.tenants.status(TENANT)).toMatchObject({
        appliedRevision: revision,
        servingRevision: revision,
      });
      // Reads: the revoked resource is gone (-32602), the broken source's fail as unavailable (-32603).
      expect((await read(replica, token, 'note://secret')).body.error?.code).toBe(-32602);
      expect((await read(replica, token, `file:///shelf/guide.txt`)).body.error?.code).toBe(-32603);
      expect((await read(replica, token, 'note://public')).body.result).toBeDefined();
    }
  });

  it("answers a removed issuer's tokens with 401 on both replicas while the source is still broken", async () => {
    const fromB = await idpB.token({ sub: 'carol', aud: AUD, scope: 'staff' });
    for (const replica of replicas) expect((await list(replica, fromB)).status).toBe(200);
    await store().deleteEntity(admin, TENANT, 'issuer', idpB.issuer);
    for (const replica of replicas) {
      await within(BOUND_MS, async () => expect((await list(replica, fromB)).status).toBe(401), 'issuer B refused');
      expect(replica.app.tenants.serving.get(TENANT)?.failedSources.has('shelf')).toBe(true);
    }
    // The other issuer's callers are still served.
    const fromA = await idpA.token({ sub: 'bob', aud: AUD, scope: 'staff' });
    expect((await list(replicas[1]!, fromA)).names).toEqual(['public']);
  });

  it('stops serving a tenant whose stored configuration cannot be built (404), never its older revision', async () => {
    const token = await idpA.token({ sub: 'bob', aud: AUD, scope: 'staff' });
    // Stored outside the admin API's checks (a row written by an older release, or by hand): a grant with no match.
    await database.sql(
      `WITH changed AS (UPDATE grants SET document = '{"allow": 42}' WHERE tenant_id = $1 AND name = 'staff' RETURNING tenant_id)
       UPDATE tenants SET revision = revision + 1 WHERE id IN (SELECT tenant_id FROM changed)`,
      [TENANT],
    );
    await database.sql(`SELECT pg_notify('mcpgw_control_plane', $1)`, [TENANT]);
    const revision = (await store().getTenant(TENANT))!.revision;
    for (const replica of replicas) {
      await within(BOUND_MS, async () => expect((await list(replica, token)).status).toBe(404), 'tenant not served');
      expect(replica.app.tenants.status(TENANT)).toMatchObject({
        appliedRevision: revision,
        lastError: { revision },
      });
      expect(replica.app.tenants.status(TENANT)?.servingRevision).toBeUndefined();
    }
    // Fixed: served again, at the new revision.
    await store().putEntity(admin, TENANT, 'grant', 'staff', {
      match: { scopes: ['staff'] },
      allow: [{ source: 'notes', uris: ['note://public'] }],
    });
    for (const replica of replicas) {
      await within(BOUND_MS, async () => expect((await list(replica, token)).status).toBe(200), 'tenant served');
    }
  });
});

describe('a replica on an old revision and the shared cache', () => {
  it('never lets a stale replica plant results the up-to-date replica serves, nor read them', async () => {
    const [upToDate, stale] = replicas as [StartedGateway, StartedGateway];
    await store().putEntity(admin, TENANT, 'grant', 'secret-readers', {
      match: { scopes: ['staff'] },
      allow: [{ source: 'notes', uris: ['note://**'] }],
    });
    const before = (await store().getTenant(TENANT))!.revision;
    for (const replica of replicas) {
      await within(
        BOUND_MS,
        () => expect(replica.app.tenants.status(TENANT)?.appliedRevision).toBe(before),
        'revision applied',
      );
    }
    // The stale replica stops following the control plane (its change signal and reconciliation lost).
    await stale.app.tenantSync!.stop();
    // A resource leaves the source; the grants stay as they are, so a caller's fingerprint and view are
    // the same on both replicas: exactly the entries a stale replica could otherwise fill for the other.
    await store().putEntity(admin, TENANT, 'source', 'notes', {
      type: 'static',
      ttlMs: { list: 60_000, read: 60_000 },
      resources: [{ uri: 'note://public', name: 'public', text: 'for everyone' }],
    });
    const after = (await store().getTenant(TENANT))!.revision;
    await within(
      BOUND_MS,
      () => expect(upToDate.app.tenants.status(TENANT)?.appliedRevision).toBe(after),
      'revision applied',
    );
    expect(stale.app.tenants.status(TENANT)?.servingRevision).toBe(before);

    // A caller neither replica has answered yet; the stale replica answers first, from its old source.
    const token = await idpA.token({ sub: 'dave', aud: AUD, scope: 'staff' });
    const bypassesBefore = stale.app.cache.metrics()[TENANT]?.result?.bypasses ?? 0;
    for (let i = 0; i < 3; i += 1) expect((await list(stale, token)).names).toContain('secret');
    expect((await read(stale, token, 'note://secret')).body.result).toBeDefined();
    for (let i = 0; i < 3; i += 1) expect((await list(upToDate, token)).names).not.toContain('secret');
    const gone = await read(upToDate, token, 'note://secret');
    expect(gone.body.error?.code, gone.text).toBe(-32602);
    // The stale replica knows, from the revision floor in Redis, that its revision is behind: it neither
    // read nor wrote entries (a second line: its entries are keyed by its revision, out of the other's reach).
    expect(stale.app.cache.metrics()[TENANT]?.result?.bypasses ?? 0).toBeGreaterThan(bypassesBefore);
  });
});

describe('deleting a tenant', () => {
  it('leaves no key of it in Redis and no row of it in the control plane but its audit trail', async () => {
    const [writer, other] = replicas as [StartedGateway, StartedGateway];
    await other.app.close();
    // A fresh pair, both following the control plane again.
    replicas = [
      writer,
      await startGateway({
        configPath,
        env: { PUBLIC_URL, DATABASE_URL: database.url, REDIS_URL: redisUrl(), SECRETS_KEY },
      }),
    ];
    await writer.app.tenantSync!.settled();
    const token = await idpA.token({ sub: 'erin', aud: AUD, scope: 'staff' });
    for (const replica of replicas) {
      await within(BOUND_MS, async () => expect((await list(replica, token)).status).toBe(200), 'tenant served');
      await read(replica, token, 'note://public');
    }
    expect((await tenantKeys(TENANT)).length).toBeGreaterThan(0);
    expect((await rateKeys(TENANT)).length).toBeGreaterThan(0);

    await store().deleteTenant(admin, TENANT);
    for (const replica of replicas)
      await within(BOUND_MS, async () => expect((await list(replica, token)).status).toBe(404), 'tenant not served');
    await within(BOUND_MS, async () => expect(await tenantKeys(TENANT)).toEqual([]), 'no cache key left');
    await within(BOUND_MS, async () => expect(await rateKeys(TENANT)).toEqual([]), 'no rate key left');

    const owned = await database.sql(
      `SELECT (SELECT count(*) FROM tenants WHERE id = $1)
            + (SELECT count(*) FROM issuers WHERE tenant_id = $1)
            + (SELECT count(*) FROM sources WHERE tenant_id = $1)
            + (SELECT count(*) FROM grants WHERE tenant_id = $1)
            + (SELECT count(*) FROM admin_role_bindings WHERE tenant_id = $1) AS rows,
              (SELECT count(*) FROM audit_events WHERE tenant_id = $1) AS audit`,
      [TENANT],
    );
    expect(Number(owned.rows[0].rows)).toBe(0);
    expect(Number(owned.rows[0].audit)).toBeGreaterThan(0);

    // Created again under the same id, it continues the old revisions, so no replica takes it for the old one.
    const lastAudit = Number(owned.rows[0].audit);
    const again = await store().createTenant(admin, TENANT, { document: {} });
    expect(again.revision).toBeGreaterThan(lastAudit);
  });
});

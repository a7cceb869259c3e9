import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Cluster } from 'ioredis';
import { startRedisCluster, type OwnRedisCluster } from '@mcpgw/test-helpers/redis';
import { within } from '@mcpgw/test-helpers/within';
import type { RecordStore } from '../src/store/records.js';
import { createRedisRecordStore } from '../src/store/redis-record-store.js';
import { createSqlRecordStore, deleteExpiredRecords } from '../src/store/sql-record-store.js';
import { createShortLivedStore } from '../src/store/short-lived-store.js';
import {
  createTenant,
  manualClock,
  openTestRedis,
  SQL_ENGINES,
  testTenantTag,
  type RedisUnderTest,
  type SqlUnderTest,
} from './storage-engines.js';

// One contract, three real backends: what oidc-provider's adapter contract
// asks (upsert, find, findByUid, findByUserCode, consume, destroy,
// revokeByGrantId) plus take-once, on the SQL store over Postgres and over
// PGlite and on the Redis store. Each backend is also opened a second time,
// as another replica would, for the single-use races.

vi.setConfig({ testTimeout: 60_000 });

interface Backend {
  store: RecordStore;
  replica: RecordStore;
  tenant(): Promise<string>;
  close(): Promise<void>;
}

const BACKENDS: Record<string, () => Promise<Backend>> = {
  'SQL on Postgres': () => sqlBackend('postgres'),
  'SQL on PGlite': () => sqlBackend('pglite'),
  async Redis() {
    const redis: RedisUnderTest = await openTestRedis('as-records');
    return {
      store: createRedisRecordStore({ redis: redis.client, namespace: redis.namespace, tenantTag: testTenantTag }),
      replica: createRedisRecordStore({ redis: redis.replica, namespace: redis.namespace, tenantTag: testTenantTag }),
      tenant: async () => `tenant-${Math.random().toString(36).slice(2, 10)}`,
      close: () => redis.close(),
    };
  },
  'Redis Cluster': clusterBackend,
};

/** The Redis store on a three-master Redis Cluster: every script and DEL must stay within one slot. */
async function clusterBackend(): Promise<Backend> {
  const cluster: OwnRedisCluster = await startRedisCluster();
  const nodes = cluster.ports.map((port) => ({ host: '127.0.0.1', port }));
  const clients = [new Cluster(nodes), new Cluster(nodes)];
  const [client, replica] = clients as [Cluster, Cluster];
  return {
    store: createRedisRecordStore({ redis: client, masters: () => client.nodes('master'), tenantTag: testTenantTag }),
    replica: createRedisRecordStore({
      redis: replica,
      masters: () => replica.nodes('master'),
      tenantTag: testTenantTag,
    }),
    tenant: async () => `tenant-${Math.random().toString(36).slice(2, 10)}`,
    async close() {
      clients.forEach((each) => each.disconnect());
      await cluster.close();
    },
  };
}

async function sqlBackend(engine: 'postgres' | 'pglite'): Promise<Backend> {
  const sql: SqlUnderTest = await SQL_ENGINES[engine]();
  return {
    store: createSqlRecordStore({ db: sql.db }),
    replica: createSqlRecordStore({ db: sql.replica }),
    tenant: () => createTenant(sql.db),
    close: () => sql.close(),
  };
}

const code = (grantId: string) => ({ kind: 'AuthorizationCode', grantId, clientId: 'app', scope: 'openid', exp: 0 });

describe.each(Object.keys(BACKENDS))('the record store on %s', (name) => {
  let backend: Backend;
  beforeAll(async () => {
    backend = await BACKENDS[name]!();
  });
  afterAll(async () => {
    await backend?.close();
  });

  it('finds what was stored, replaced by a later upsert, and nothing after destroy', async () => {
    const { store } = backend;
    const tenant = await backend.tenant();
    expect(await store.find(tenant, 'AuthorizationCode', 'c1')).toBeUndefined();
    await store.upsert(tenant, 'AuthorizationCode', 'c1', { ...code('g1'), nested: { list: [] } }, 60);
    expect(await store.find(tenant, 'AuthorizationCode', 'c1')).toEqual({ ...code('g1'), nested: { list: [] } });
    await store.upsert(tenant, 'AuthorizationCode', 'c1', code('g2'), 60);
    expect(await store.find(tenant, 'AuthorizationCode', 'c1')).toEqual(code('g2'));
    // Another model with the same id is another record.
    expect(await store.find(tenant, 'Interaction', 'c1')).toBeUndefined();
    await store.destroy(tenant, 'AuthorizationCode', 'c1');
    expect(await store.find(tenant, 'AuthorizationCode', 'c1')).toBeUndefined();
  });

  it('finds a session by its uid, also after the session is saved again under a new id', async () => {
    const { store } = backend;
    const tenant = await backend.tenant();
    await store.upsert(tenant, 'Session', 'old', { uid: 'u1', accountId: 'alice' }, 600);
    expect(await store.findByUid(tenant, 'Session', 'u1')).toEqual({ uid: 'u1', accountId: 'alice' });
    // oidc-provider regenerates a session's id: it saves the new one, then destroys the old one.
    await store.upsert(tenant, 'Session', 'new', { uid: 'u1', accountId: 'alice', login: 2 }, 600);
    await store.destroy(tenant, 'Session', 'old');
    expect(await store.findByUid(tenant, 'Session', 'u1')).toEqual({ uid: 'u1', accountId: 'alice', login: 2 });
    await store.destroy(tenant, 'Session', 'new');
    expect(await store.findByUid(tenant, 'Session', 'u1')).toBeUndefined();
  });

  it('finds a record by its user code', async () => {
    const { store } = backend;
    const tenant = await backend.tenant();
    await store.upsert(tenant, 'DeviceCode', 'd1', { userCode: 'ABCD-EFGH', grantId: 'g' }, 600);
    expect(await store.findByUserCode(tenant, 'DeviceCode', 'ABCD-EFGH')).toMatchObject({ userCode: 'ABCD-EFGH' });
    expect(await store.findByUserCode(tenant, 'DeviceCode', 'WXYZ-WXYZ')).toBeUndefined();
  });

  it('consumes a record once: the second consume reports false, and find shows `consumed`', async () => {
    const { store } = backend;
    const tenant = await backend.tenant();
    await store.upsert(tenant, 'AuthorizationCode', 'c', code('g'), 60);
    expect(await store.consume(tenant, 'AuthorizationCode', 'c')).toBe(true);
    expect(await store.consume(tenant, 'AuthorizationCode', 'c')).toBe(false);
    const found = await store.find(tenant, 'AuthorizationCode', 'c');
    expect(found?.consumed).toEqual(expect.any(Number));
    // Saving it again (oidc-provider re-saves models) does not make it usable again.
    await store.upsert(tenant, 'AuthorizationCode', 'c', code('g'), 60);
    expect((await store.find(tenant, 'AuthorizationCode', 'c'))?.consumed).toEqual(expect.any(Number));
    expect(await store.consume(tenant, 'AuthorizationCode', 'c')).toBe(false);
    // Nothing there: nothing to consume.
    expect(await store.consume(tenant, 'AuthorizationCode', 'missing')).toBe(false);
  });

  it('lets exactly one of many concurrent consumes on two replicas succeed', async () => {
    const tenant = await backend.tenant();
    for (let round = 0; round < 5; round += 1) {
      const id = `race-${round}`;
      await backend.store.upsert(tenant, 'AuthorizationCode', id, code('g'), 60);
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          (i % 2 === 0 ? backend.store : backend.replica).consume(tenant, 'AuthorizationCode', id),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    }
  });

  it('takes a record once: the first take gets it, every other gets nothing', async () => {
    const tenant = await backend.tenant();
    await backend.store.upsert(tenant, 'UpstreamSignIn', 's', { value: { nonce: 'n' } }, 60);
    const taken = await Promise.all([
      backend.store.take(tenant, 'UpstreamSignIn', 's'),
      backend.replica.take(tenant, 'UpstreamSignIn', 's'),
      backend.replica.take(tenant, 'UpstreamSignIn', 's'),
    ]);
    expect(taken.filter((value) => value !== undefined)).toEqual([{ value: { nonce: 'n' } }]);
    expect(await backend.store.find(tenant, 'UpstreamSignIn', 's')).toBeUndefined();
  });

  it('inserts a record only where there is none: exactly one of concurrent inserts on two replicas wins', async () => {
    const tenant = await backend.tenant();
    for (let round = 0; round < 5; round += 1) {
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          (i % 2 === 0 ? backend.store : backend.replica).insertIfAbsent(tenant, 'UsedOnce', `jti-${round}`, {}, 60),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    }
    expect(await backend.store.insertIfAbsent(tenant, 'UsedOnce', 'jti-0', {}, 60)).toBe(false);
    const other = await backend.tenant();
    expect(await backend.store.insertIfAbsent(other, 'UsedOnce', 'jti-0', {}, 60)).toBe(true);
  });

  it('revokes by grant every token and code of that grant, and nothing of another grant', async () => {
    const { store } = backend;
    const tenant = await backend.tenant();
    await store.upsert(tenant, 'AuthorizationCode', 'c1', code('g1'), 60);
    await store.upsert(tenant, 'RefreshToken', 'r1', { grantId: 'g1', accountId: 'alice' }, 600);
    await store.upsert(tenant, 'AuthorizationCode', 'c2', code('g2'), 60);
    await store.revokeByGrantId(tenant, 'g1');
    expect(await store.find(tenant, 'AuthorizationCode', 'c1')).toBeUndefined();
    expect(await store.find(tenant, 'RefreshToken', 'r1')).toBeUndefined();
    expect(await store.find(tenant, 'AuthorizationCode', 'c2')).toEqual(code('g2'));
  });

  it("keeps tenants apart: another tenant's ids find, consume, destroy and revoke nothing", async () => {
    const { store } = backend;
    const a = await backend.tenant();
    const b = await backend.tenant();
    await store.upsert(a, 'AuthorizationCode', 'same', code('g'), 60);
    await store.upsert(a, 'Session', 'sess', { uid: 'u' }, 60);
    expect(await store.find(b, 'AuthorizationCode', 'same')).toBeUndefined();
    expect(await store.findByUid(b, 'Session', 'u')).toBeUndefined();
    expect(await store.consume(b, 'AuthorizationCode', 'same')).toBe(false);
    expect(await store.take(b, 'AuthorizationCode', 'same')).toBeUndefined();
    await store.destroy(b, 'AuthorizationCode', 'same');
    await store.revokeByGrantId(b, 'g');
    expect(await store.find(a, 'AuthorizationCode', 'same')).toEqual(code('g'));
    expect(await store.consume(a, 'AuthorizationCode', 'same')).toBe(true);
  });

  it('forgets everything of one tenant, and nothing of another', async () => {
    const { store } = backend;
    const a = await backend.tenant();
    const b = await backend.tenant();
    for (const tenant of [a, b]) {
      await store.upsert(tenant, 'Session', 's', { uid: 'u' }, 600);
      await store.upsert(tenant, 'AuthorizationCode', 'c', code('g'), 60);
    }
    await store.forgetTenant(a);
    expect(await store.find(a, 'Session', 's')).toBeUndefined();
    expect(await store.findByUid(a, 'Session', 'u')).toBeUndefined();
    expect(await store.find(a, 'AuthorizationCode', 'c')).toBeUndefined();
    expect(await store.findByUid(b, 'Session', 'u')).toEqual({ uid: 'u' });
    expect(await store.find(b, 'AuthorizationCode', 'c')).toEqual(code('g'));
  });

  it('refuses a record without an id or with a lifetime that is not positive, storing nothing', async () => {
    const { store } = backend;
    const tenant = await backend.tenant();
    await expect(store.upsert(tenant, 'AuthorizationCode', '', code('g'), 60)).rejects.toThrow(/an id/);
    await expect(store.upsert(tenant, 'AuthorizationCode', 'x', code('g'), 0)).rejects.toThrow(/positive/);
    expect(await store.find(tenant, 'AuthorizationCode', 'x')).toBeUndefined();
  });

  it('gives the upstream sign-in state back once, wrapped so its fields are not read as a record', async () => {
    const stores = { sql: backend.store };
    const tenant = await backend.tenant();
    const state = createShortLivedStore(stores);
    await state.put(tenant, 'st', { uid: 'looks-like-an-index', consumed: 5, verifier: 'v' }, 60);
    expect(await state.take(tenant, 'st')).toEqual({ uid: 'looks-like-an-index', consumed: 5, verifier: 'v' });
    expect(await state.take(tenant, 'st')).toBeUndefined();
    await expect(state.put(tenant, 'st', {}, -1)).rejects.toThrow(/positive lifetime/);
    expect(await state.firstUse(tenant, 'jti', 60)).toBe(true);
    expect(await state.firstUse(tenant, 'jti', 60)).toBe(false);
  });
});

describe('expiry of SQL records (an injected clock)', () => {
  let sql: SqlUnderTest;
  beforeAll(async () => {
    sql = await SQL_ENGINES.postgres();
  });
  afterAll(async () => {
    await sql?.close();
  });

  it('hides a record once its lifetime has passed, refuses to consume it, and the sweep deletes it', async () => {
    const clock = manualClock();
    const store = createSqlRecordStore({ db: sql.db, now: clock.now });
    const tenant = await createTenant(sql.db);
    await store.upsert(tenant, 'AuthorizationCode', 'short', code('g'), 60);
    await store.upsert(tenant, 'RefreshToken', 'long', { grantId: 'g' }, 3600);
    await store.upsert(tenant, 'Client', 'forever', { client_id: 'forever' });
    clock.advance(59_000);
    expect(await store.find(tenant, 'AuthorizationCode', 'short')).toEqual(code('g'));
    clock.advance(1_000);
    expect(await store.find(tenant, 'AuthorizationCode', 'short')).toBeUndefined();
    expect(await store.consume(tenant, 'AuthorizationCode', 'short')).toBe(false);
    expect(await store.take(tenant, 'AuthorizationCode', 'short')).toBeUndefined();

    const count = async () =>
      Number(
        (
          await sql.db.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM authorization_server_records WHERE tenant_id = $1',
            [tenant],
          )
        ).rows[0]?.n,
      );
    // A used-once key is free again once its lifetime has passed.
    expect(await store.insertIfAbsent(tenant, 'UsedOnce', 'jti', {}, 60)).toBe(true);
    clock.advance(30_000);
    expect(await store.insertIfAbsent(tenant, 'UsedOnce', 'jti', {}, 60)).toBe(false);
    clock.advance(30_000);
    expect(await store.insertIfAbsent(tenant, 'UsedOnce', 'jti', {}, 60)).toBe(true);
    await store.destroy(tenant, 'UsedOnce', 'jti');

    expect(await count()).toBe(3);
    expect(await deleteExpiredRecords(sql.db, clock.now())).toBeGreaterThanOrEqual(1);
    expect(await count()).toBe(2);
    clock.advance(10 * 3600_000);
    await deleteExpiredRecords(sql.db, clock.now());
    expect(await store.find(tenant, 'Client', 'forever')).toEqual({ client_id: 'forever' });
    expect(await count()).toBe(1);
  });
});

describe('expiry of Redis records (key TTLs)', () => {
  let redis: RedisUnderTest;
  beforeAll(async () => {
    redis = await openTestRedis('as-ttl');
  });
  afterAll(async () => {
    await redis?.close();
  });

  it('sets the TTL of a record and its indexes to its lifetime, and the grant set to its longest member', async () => {
    const store = createRedisRecordStore({ redis: redis.client, namespace: redis.namespace, tenantTag: testTenantTag });
    await store.upsert('acme', 'Session', 's', { uid: 'u' }, 600);
    await store.upsert('acme', 'AuthorizationCode', 'c', code('g'), 60);
    await store.upsert('acme', 'AuthorizationCode', 'c2', code('g'), 30);
    const ttl = (key: string) => redis.client.ttl(`${redis.namespace}:as:{${testTenantTag('acme')}}:${key}`);
    expect(await ttl('r:Session:s')).toBeGreaterThan(590);
    expect(await ttl('uid:Session:u')).toBeGreaterThan(590);
    expect(await ttl('r:AuthorizationCode:c')).toBeGreaterThan(50);
    expect(await ttl('r:AuthorizationCode:c')).toBeLessThanOrEqual(60);
    expect(await ttl('g:g')).toBeGreaterThan(50);
    expect(await ttl('g:g')).toBeLessThanOrEqual(60);
    await expect(store.upsert('acme', 'Session', 'forever', { uid: 'v' })).rejects.toThrow(/only records that expire/);
    // Keys name the tenant by its keyed tag: Redis holds no tenant id in the clear.
    expect((await redis.client.keys(`${redis.namespace}:*`)).length).toBeGreaterThan(0);
    expect(await redis.client.keys(`${redis.namespace}:*acme*`)).toEqual([]);
  });

  it('forgets a record when its TTL runs out', async () => {
    const store = createRedisRecordStore({ redis: redis.client, namespace: redis.namespace, tenantTag: testTenantTag });
    await store.upsert('acme', 'Interaction', 'brief', { kind: 'Interaction' }, 1);
    expect(await store.find('acme', 'Interaction', 'brief')).toEqual({ kind: 'Interaction' });
    await within(5_000, async () => expect(await store.find('acme', 'Interaction', 'brief')).toBeUndefined());
    expect(await store.consume('acme', 'Interaction', 'brief')).toBe(false);
  });
});

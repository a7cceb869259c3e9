import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { findAccountFrom } from '../src/account-claims.js';
import { bindShortLivedStore } from '../src/store/pending-state.js';
import {
  createAuthorizationServerStorage,
  type AuthorizationServerStorage,
} from '../src/store/authorization-server-storage.js';
import {
  createTenant,
  manualClock,
  openTestRedis,
  SQL_ENGINES,
  testTenantTag,
  type RedisUnderTest,
  type SqlUnderTest,
} from './storage-engines.js';

// The admin API's port over what oidc-provider stored (written here through
// the same adapters a Provider uses): registered clients and grants, listed
// per tenant; revoking a grant or deleting a client removes every token and
// code of it in SQL and in Redis; another tenant's ids reach nothing.

vi.setConfig({ testTimeout: 60_000 });

const DAY = 24 * 3600_000;

describe('the authorization records of a tenant', () => {
  let sql: SqlUnderTest;
  let redis: RedisUnderTest;
  let storage: AuthorizationServerStorage;
  const clock = manualClock();

  beforeAll(async () => {
    sql = await SQL_ENGINES.postgres();
    redis = await openTestRedis('as-admin');
    storage = createAuthorizationServerStorage({
      db: sql.db,
      redis: { client: redis.client, namespace: redis.namespace, tenantTag: testTenantTag },
      now: clock.now,
    });
  });
  afterAll(async () => {
    await redis?.close();
    await sql?.close();
  });

  /** A registered client, a user's grant to it and a code and refresh token issued under the grant. */
  async function connect(tenant: string, clientId: string, accountId: string, grantId: string) {
    const adapter = storage.adapterFor(tenant);
    await adapter('Client').upsert(clientId, {
      client_id: clientId,
      client_name: `The ${clientId} app`,
      redirect_uris: ['http://127.0.0.1/cb'],
    });
    await adapter('Grant').upsert(
      grantId,
      {
        accountId,
        clientId,
        openid: { scope: 'openid offline_access' },
        resources: { 'https://mcp.example/t/acme/mcp': 'files:read files:write' },
        exp: Math.floor(clock.now() / 1000) + 86_400,
      },
      86_400,
    );
    await adapter('AuthorizationCode').upsert(`code-${grantId}`, { grantId, clientId, accountId }, 60);
    await adapter('RefreshToken').upsert(`rt-${grantId}`, { grantId, clientId, accountId }, 3600);
  }

  it('lists registered clients and the grants of each user, with scopes per resource', async () => {
    const tenant = await createTenant(sql.db);
    const registeredAt = clock.now();
    await connect(tenant, 'app-one', 'alice', 'g-1');
    clock.advance(1000);
    await connect(tenant, 'app-two', 'alice', 'g-2');
    await connect(tenant, 'app-two', 'bob', 'g-3');
    // A Client ID Metadata Document client is not registered here: it shows through its grant.
    await storage
      .adapterFor(tenant)('Grant')
      .upsert('g-4', { accountId: 'bob', clientId: 'https://app.example/client.json' }, 3600);
    // A use of the client (oidc-provider finds it on every request) is recorded, to within minutes.
    clock.advance(10 * 60_000);
    await storage.adapterFor(tenant)('Client').find('app-one');

    const clients = await storage.records.listClients(tenant);
    expect(clients.map((client) => [client.clientId, client.kind])).toEqual([
      ['app-one', 'registered'],
      ['app-two', 'registered'],
      ['https://app.example/client.json', 'metadata-document'],
    ]);
    expect(clients[0]).toEqual({
      clientId: 'app-one',
      kind: 'registered',
      clientName: 'The app-one app',
      redirectUris: ['http://127.0.0.1/cb'],
      createdAt: new Date(registeredAt).toISOString(),
      lastUsedAt: new Date(clock.now()).toISOString(),
    });
    // Registering counts as a use: an unused registration expires from its registration on.
    expect(clients[1]?.lastUsedAt).toBe(clients[1]?.createdAt);

    expect((await storage.records.listGrants(tenant, { accountId: 'alice' })).map((grant) => grant.grantId)).toEqual([
      'g-1',
      'g-2',
    ]);
    expect(await storage.records.listGrants(tenant, { accountId: 'bob', clientId: 'app-two' })).toEqual([
      expect.objectContaining({
        grantId: 'g-3',
        accountId: 'bob',
        clientId: 'app-two',
        scopes: ['files:read', 'files:write', 'offline_access', 'openid'],
        resources: ['https://mcp.example/t/acme/mcp'],
        expiresAt: new Date((Math.floor((registeredAt + 1000) / 1000) + 86_400) * 1000).toISOString(),
      }),
    ]);
  });

  it('revokes a grant with every token and code issued under it, in SQL and in Redis', async () => {
    const tenant = await createTenant(sql.db);
    await connect(tenant, 'app', 'alice', 'g-keep');
    await connect(tenant, 'app', 'bob', 'g-revoke');
    expect(await storage.records.revokeGrant(tenant, 'g-revoke')).toMatchObject({
      grantId: 'g-revoke',
      accountId: 'bob',
    });
    const adapter = storage.adapterFor(tenant);
    expect(await adapter('Grant').find('g-revoke')).toBeUndefined();
    expect(await adapter('RefreshToken').find('rt-g-revoke')).toBeUndefined();
    expect(await storage.stores.redis?.find(tenant, 'AuthorizationCode', 'code-g-revoke')).toBeUndefined();
    expect(await adapter('RefreshToken').find('rt-g-keep')).toBeDefined();
    expect(await storage.stores.redis?.find(tenant, 'AuthorizationCode', 'code-g-keep')).toBeDefined();
    expect(await storage.records.revokeGrant(tenant, 'g-revoke')).toBeUndefined();
  });

  it('deletes a client with its registration and every grant of it', async () => {
    const tenant = await createTenant(sql.db);
    await connect(tenant, 'gone', 'alice', 'g-a');
    await connect(tenant, 'gone', 'bob', 'g-b');
    await connect(tenant, 'stays', 'alice', 'g-c');
    expect(await storage.records.deleteClient(tenant, 'gone')).toMatchObject({ clientId: 'gone', kind: 'registered' });
    expect((await storage.records.listClients(tenant)).map((client) => client.clientId)).toEqual(['stays']);
    expect((await storage.records.listGrants(tenant, {})).map((grant) => grant.grantId)).toEqual(['g-c']);
    expect(await storage.adapterFor(tenant)('RefreshToken').find('rt-g-b')).toBeUndefined();
    expect(await storage.stores.redis?.find(tenant, 'AuthorizationCode', 'code-g-a')).toBeUndefined();
    expect(await storage.records.deleteClient(tenant, 'gone')).toBeUndefined();
  });

  it("never shows nor revokes tenant B's clients and grants through tenant A", async () => {
    const a = await createTenant(sql.db, 'a');
    const b = await createTenant(sql.db, 'b');
    await connect(b, 'b-app', 'carol', 'g-of-b');
    expect(await storage.records.listClients(a)).toEqual([]);
    expect(await storage.records.listGrants(a, {})).toEqual([]);
    expect(await storage.records.revokeGrant(a, 'g-of-b')).toBeUndefined();
    expect(await storage.records.deleteClient(a, 'b-app')).toBeUndefined();
    expect(await storage.adapterFor(a)('Grant').find('g-of-b')).toBeUndefined();
    await storage.adapterFor(a)('AccessToken').revokeByGrantId('g-of-b');
    expect((await storage.records.listGrants(b, {})).map((grant) => grant.grantId)).toEqual(['g-of-b']);
    expect(await storage.adapterFor(b)('RefreshToken').find('rt-g-of-b')).toBeDefined();
    expect(await storage.stores.redis?.find(b, 'AuthorizationCode', 'code-g-of-b')).toBeDefined();
  });

  it('keeps mapped claims per account and tenant, replaced by the next sign-in', async () => {
    const a = await createTenant(sql.db, 'a');
    const b = await createTenant(sql.db, 'b');
    await storage.accounts.put(a, 'alice', { email: 'alice@a.example', groups: ['staff'] });
    expect(await storage.accounts.get(a, 'alice')).toEqual({ email: 'alice@a.example', groups: ['staff'] });
    expect(await storage.accounts.get(b, 'alice')).toBeUndefined();
    await storage.accounts.put(a, 'alice', { email: 'alice@a.example', groups: [] });
    expect(await storage.accounts.get(a, 'alice')).toEqual({ email: 'alice@a.example', groups: [] });
    await expect(storage.accounts.put(a, 'alice', [] as never)).rejects.toThrow(/JSON object/);
    expect(await storage.accounts.get(a, 'alice')).toEqual({ email: 'alice@a.example', groups: [] });
    const findAccount = findAccountFrom(storage.accounts, a);
    const account = await findAccount({} as never, 'alice');
    expect(await account?.claims('id_token', 'openid', {}, [])).toEqual({
      sub: 'alice',
      email: 'alice@a.example',
      groups: [],
    });
    expect(await findAccountFrom(storage.accounts, b)({} as never, 'alice')).toBeUndefined();
    expect(await storage.accounts.delete(b, 'alice')).toBe(false);
    expect(await storage.accounts.delete(a, 'alice')).toBe(true);
    expect(await storage.accounts.get(a, 'alice')).toBeUndefined();
  });

  it('counts, touches and expires the registered clients of one tenant (the clients policy port)', async () => {
    const a = await createTenant(sql.db, 'a');
    const b = await createTenant(sql.db, 'b');
    const start = clock.now();
    await connect(a, 'idle', 'alice', 'g-idle');
    await connect(a, 'busy', 'alice', 'g-busy');
    await connect(b, 'idle', 'bob', 'g-b-idle');
    const clients = storage.registeredClientsOf(a);
    expect(await clients.count()).toBe(2);
    // A metadata-document client is never stored, so never counted.
    await storage
      .adapterFor(a)('Grant')
      .upsert('g-cimd', { accountId: 'x', clientId: 'https://app.example/c.json' }, 60);
    expect(await clients.count()).toBe(2);

    await clients.touch('busy', new Date(start + 20 * DAY));
    await clients.touch('unknown', new Date(start + 20 * DAY));
    // Never backwards.
    await clients.touch('busy', new Date(start + DAY));
    expect(await clients.deleteUnusedSince(new Date(start + 10 * DAY))).toBe(1);
    expect((await storage.records.listClients(a)).map((client) => client.clientId)).toEqual([
      'busy',
      'https://app.example/c.json',
    ]);
    expect(await storage.adapterFor(a)('RefreshToken').find('rt-g-idle')).toBeUndefined();
    expect(await storage.stores.redis?.find(a, 'AuthorizationCode', 'code-g-idle')).toBeUndefined();
    expect(await storage.adapterFor(a)('RefreshToken').find('rt-g-busy')).toBeDefined();
    // Tenant B's client of the same name, just as old, is not A's to expire.
    expect(await storage.registeredClientsOf(b).count()).toBe(1);
    expect(await clients.deleteUnusedSince(new Date(start + 21 * DAY))).toBe(1);
    expect(await storage.registeredClientsOf(b).count()).toBe(1);
  });

  it('keeps the upstream sign-in state of one tenant for one take, checked by its parser', async () => {
    const a = await createTenant(sql.db, 'a');
    const b = await createTenant(sql.db, 'b');
    const parse = (value: unknown) =>
      typeof (value as { nonce?: unknown }).nonce === 'string' ? (value as { nonce: string }) : undefined;
    const pendingA = bindShortLivedStore(storage.shortLived, a, parse);
    const pendingB = bindShortLivedStore(storage.shortLived, b, parse);
    await pendingA.put('state-1', { nonce: 'n-1' }, 600);
    expect(await pendingB.take('state-1')).toBeUndefined();
    expect(await pendingA.take('state-1')).toEqual({ nonce: 'n-1' });
    expect(await pendingA.take('state-1')).toBeUndefined();
    await storage.shortLived.put(a, 'state-2', { other: 'shape' }, 600);
    expect(await pendingA.take('state-2')).toBeUndefined();
  });

  it("deletes a tenant's records and account claims with the tenant", async () => {
    const tenant = await createTenant(sql.db);
    await connect(tenant, 'app', 'alice', 'g');
    await storage.accounts.put(tenant, 'alice', { email: 'alice@example.com' });
    await sql.db.query('DELETE FROM tenants WHERE id = $1', [tenant]);
    const left = await sql.db.query(
      `SELECT 1 FROM authorization_server_records WHERE tenant_id = $1
       UNION ALL SELECT 1 FROM authorization_server_accounts WHERE tenant_id = $1`,
      [tenant],
    );
    expect(left.rows).toEqual([]);
  });
});

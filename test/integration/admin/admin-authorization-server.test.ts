import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AuthorizationRecords, ConnectedClient, UserGrant, UserGrantFilter } from '@mcpgw/admin';
import { type AdminFixture, type AdminResponse, CANARIES, eventually, startAdminFixture } from './admin-fixture.js';

// A tenant's hosted authorization server through the admin API, on a real
// control plane (Postgres), attacked by tenant alpha's admin: the settings are
// a tenant admin's except the demo login; the upstream's client secret is
// write-only, kept when a write omits it and only while it goes where it was
// written for; destinations that are internal or the gateway itself are
// refused; nothing of tenant beta's is reachable, not even by naming its
// clients' and grants' ids. The connected clients and grants come from the
// AuthorizationRecords port, here an in-memory fake (the authorization
// server's store implements the real one); the test checks that the routes
// ask the port only about the tenant the path names.

type Body = Record<string, unknown>;

const SECRET = CANARIES[0];
const UPSTREAM = 'https://login.example.com/alpha/v2.0';

/** The port over two tenants' records in memory, recording which tenant every call named. */
function fakeRecords() {
  const clients = new Map<string, ConnectedClient[]>();
  const grants = new Map<string, UserGrant[]>();
  const asked: string[] = [];
  const seed = (tenantId: string, client: ConnectedClient, grant: UserGrant) => {
    clients.set(tenantId, [...(clients.get(tenantId) ?? []), client]);
    grants.set(tenantId, [...(grants.get(tenantId) ?? []), grant]);
  };
  const records: AuthorizationRecords = {
    listClients(tenantId) {
      asked.push(tenantId);
      return Promise.resolve(clients.get(tenantId) ?? []);
    },
    listGrants(tenantId, filter: UserGrantFilter) {
      asked.push(tenantId);
      return Promise.resolve(
        (grants.get(tenantId) ?? []).filter(
          (grant) =>
            (filter.accountId === undefined || grant.accountId === filter.accountId) &&
            (filter.clientId === undefined || grant.clientId === filter.clientId),
        ),
      );
    },
    revokeGrant(tenantId, grantId) {
      asked.push(tenantId);
      const list = grants.get(tenantId) ?? [];
      const found = list.find((grant) => grant.grantId === grantId);
      grants.set(
        tenantId,
        list.filter((grant) => grant !== found),
      );
      return Promise.resolve(found);
    },
    deleteClient(tenantId, clientId) {
      asked.push(tenantId);
      const list = clients.get(tenantId) ?? [];
      const found = list.find((client) => client.clientId === clientId);
      clients.set(
        tenantId,
        list.filter((client) => client !== found),
      );
      grants.set(
        tenantId,
        (grants.get(tenantId) ?? []).filter((grant) => grant.clientId !== clientId),
      );
      return Promise.resolve(found);
    },
  };
  return { records, seed, asked, grants, clients };
}

const pointers = (response: AdminResponse): string[] =>
  ((response.json.errors ?? []) as { pointer?: string }[]).map((error) => error.pointer ?? '(none)');

describe("a tenant's hosted authorization server through the admin API", () => {
  let f: AdminFixture;
  let alphaAdmin: string;
  let operator: string;
  const fake = fakeRecords();

  const path = (tenant = 'alpha') => `/tenants/${tenant}/authorization-server`;
  const put = (body: unknown, options: { token?: string; etag?: string; tenant?: string } = {}) =>
    f.call('PUT', path(options.tenant), {
      token: options.token ?? alphaAdmin,
      body,
      ...(options.etag === undefined ? {} : { headers: { 'if-match': options.etag } }),
    });
  const read = (token = alphaAdmin) => f.call('GET', path(), { token });
  const upstream = (extra: Body = {}): Body => ({ issuer: UPSTREAM, clientId: 'gateway-alpha', ...extra });
  /** The settings alpha's serving runtime holds, once it serves the stored revision. */
  const served = async () => {
    await eventually(5000, async () => {
      const status = await f.call('GET', '/tenants/alpha/status', { token: alphaAdmin });
      return (status.json.runtime as { upToDate?: boolean }).upToDate === true;
    });
    return f.gateway.app.tenants.serving.get('alpha')?.config.authorizationServer;
  };
  const removeSettings = async () => {
    const current = await read(operator);
    if (current.status !== 200) return;
    const removed = await f.call('DELETE', path(), {
      token: operator,
      headers: { 'if-match': current.headers.get('etag')! },
    });
    expect(removed.status, removed.text).toBe(204);
  };

  beforeAll(async () => {
    f = await startAdminFixture('postgres', { authorizationRecords: fake.records });
    alphaAdmin = await f.tenantAdmin('alpha');
    operator = await f.operator();
    fake.seed(
      'alpha',
      { clientId: 'https://claude.ai/oauth/mcp-oauth-client-metadata', kind: 'metadata-document', redirectUris: [] },
      {
        grantId: 'g-alpha',
        accountId: 'ada',
        clientId: 'https://claude.ai/oauth/mcp-oauth-client-metadata',
        scopes: ['staff'],
      },
    );
    fake.seed(
      'beta',
      { clientId: 'beta-client', kind: 'registered', clientName: 'Beta tool', redirectUris: ['http://127.0.0.1/cb'] },
      { grantId: 'g-beta', accountId: 'bob', clientId: 'beta-client', scopes: ['staff'] },
    );
  }, 120_000);
  afterAll(async () => f?.close());
  afterEach(async () => {
    await f.expectNoCredentialLeak();
    await removeSettings();
  });

  it('lets a tenant admin set it; the client secret is sealed, never returned, and reaches the runtime', async () => {
    const created = await put({ upstream: upstream({ clientSecret: SECRET }), claims: { groups: 'roles' } });
    expect(created.status, created.text).toBe(201);
    expect(created.json).toMatchObject({ clientSecretSet: true, writtenBy: 'tenant-admin', version: 1 });
    // Stored as written, as the bootstrap file's entry is (the defaults are filled in when it is served).
    expect(created.json.document).toEqual({
      upstream: { issuer: UPSTREAM, clientId: 'gateway-alpha' },
      claims: { groups: 'roles' },
    });
    expect(created.text).not.toContain(SECRET);
    expect(created.json.document).toHaveProperty('upstream');
    expect((created.json.document as { upstream: Body }).upstream).not.toHaveProperty('clientSecret');
    const got = await read();
    expect(got.status).toBe(200);
    expect(got.headers.get('etag')).toBe('"1"');
    expect(got.json).toEqual(created.json);
    // Served through servedTenantEntry → runtimeOfStoredTenant with the sealed secret merged back in.
    expect((await served())?.upstream).toEqual({
      issuer: UPSTREAM,
      clientId: 'gateway-alpha',
      clientSecret: SECRET,
      scopes: ['openid', 'profile', 'email'],
    });
    const audit = await f.call('GET', '/tenants/alpha/audit?targetType=authorization-server', { token: alphaAdmin });
    expect(audit.json.events).toEqual([
      expect.objectContaining({
        action: 'create',
        targetId: 'default',
        actor: expect.objectContaining({ kind: 'tenant-admin' }),
      }),
    ]);
  });

  it('keeps the stored secret when a write omits it, and asks for it again when the upstream changes', async () => {
    const created = await put({ upstream: upstream({ clientSecret: SECRET }) });
    const etag = created.headers.get('etag')!;
    const kept = await put({ upstream: upstream(), tokens: { accessTokenSeconds: 600 } }, { etag });
    expect(kept.status, kept.text).toBe(200);
    expect(kept.json).toMatchObject({ clientSecretSet: true, version: 2 });
    expect(await served()).toMatchObject({ upstream: { clientSecret: SECRET }, tokens: { accessTokenSeconds: 600 } });

    const before = await f.dump();
    const moved = await put({ upstream: upstream({ issuer: 'https://attacker.example.net' }) }, { etag: '"2"' });
    expect(moved.status, moved.text).toBe(422);
    expect(pointers(moved)).toEqual(['/upstream/issuer']);
    const endpoints = {
      authorization: 'https://a.example.net/a',
      token: 'https://a.example.net/t',
      jwks: 'https://a.example.net/k',
    };
    const viaEndpoint = await put({ upstream: upstream({ endpoints }) }, { etag: '"2"' });
    expect(pointers(viaEndpoint)).toEqual(['/upstream/endpoints/token']);
    expect(await f.dump()).toBe(before);

    const movedWithSecret = await put(
      { upstream: upstream({ issuer: 'https://other.example.net', clientSecret: CANARIES[1] }) },
      { etag: '"2"' },
    );
    expect(movedWithSecret.status, movedWithSecret.text).toBe(200);
    const dropped = await put(
      { upstream: upstream({ issuer: 'https://other.example.net', clientSecret: null }) },
      { etag: '"3"' },
    );
    expect(dropped.json).toMatchObject({ clientSecretSet: false });
    expect((await served())?.upstream).not.toHaveProperty('clientSecret');
  });

  it('needs If-Match to replace or remove it, and refuses a stale one', async () => {
    await put({ upstream: upstream() });
    expect((await put({ upstream: upstream() })).status).toBe(428);
    expect((await put({ upstream: upstream() }, { etag: '"7"' })).status).toBe(412);
    expect((await f.call('DELETE', path(), { token: alphaAdmin })).status).toBe(428);
    const created = await f.call('PUT', path(), {
      token: alphaAdmin,
      body: { upstream: upstream() },
      headers: { 'if-none-match': '*' },
    });
    expect(created.status).toBe(412);
  });

  it('refuses the demo login to a tenant admin, and grants it to an operator on loopback', async () => {
    const before = await f.dump();
    const demo = await put({ upstream: { demo: true } });
    expect(demo.status, demo.text).toBe(403);
    expect(demo.json.detail).toContain('Only platform operators may turn on the demo login');
    expect(await f.dump()).toBe(before);
    const byOperator = await put({ upstream: { demo: true } }, { token: operator });
    expect(byOperator.status, byOperator.text).toBe(201);
    expect(byOperator.json).toMatchObject({ clientSecretSet: false, writtenBy: 'operator' });
    // A tenant admin may replace the operator's demo login with its own upstream.
    const replaced = await put({ upstream: upstream({ clientSecret: SECRET }) }, { etag: '"1"' });
    expect(replaced.status, replaced.text).toBe(200);
  });

  it('refuses internal destinations, the gateway itself, and oversized or reserved claim mappings', async () => {
    const before = await f.dump();
    const cases: [Body, number, string[]][] = [
      [{ upstream: upstream({ issuer: 'https://169.254.169.254/latest' }) }, 422, ['/upstream/issuer']],
      [{ upstream: upstream({ issuer: 'https://[::ffff:10.0.0.1]/' }) }, 422, ['/upstream/issuer']],
      [
        {
          upstream: { demo: false, issuer: UPSTREAM, clientId: 'x' },
        },
        422,
        ['/upstream/demo'],
      ],
      [{ upstream: upstream({ issuer: `${f.base}/t/alpha/oauth` }) }, 422, ['/upstream/issuer']],
      [{ upstream: upstream({ issuer: `${f.base}/t/beta/oauth` }) }, 422, ['/upstream/issuer']],
      [
        {
          upstream: upstream(),
          claims: { extra: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`c${i}`, 'path'])) },
        },
        422,
        ['/claims/extra'],
      ],
      [{ upstream: upstream(), claims: { extra: { aud: 'tid' } } }, 422, ['/claims/extra/aud']],
      [{ upstream: upstream(), claims: { subject: 'a'.repeat(5000) } }, 422, ['/claims/subject']],
      [{ upstream: upstream(), scopes: ['staff', 'admin:everything'] }, 422, ['/scopes/1']],
      [{ upstream: upstream({ clientSecret: { $env: 'SECRETS_KEY' } }) }, 422, ['/upstream/clientSecret']],
    ];
    for (const [body, status, expected] of cases) {
      const response = await put(body);
      expect(response.status, `${JSON.stringify(body).slice(0, 120)}: ${response.text}`).toBe(status);
      expect(pointers(response), JSON.stringify(body).slice(0, 120)).toEqual(expected);
    }
    expect(await f.dump()).toBe(before);
  });

  it("keeps tenant alpha's admin out of beta's settings, clients and grants", async () => {
    const betaSettings = await put(
      { upstream: { issuer: 'https://login.example.com/beta', clientId: 'b' } },
      { token: operator, tenant: 'beta' },
    );
    expect(betaSettings.status, betaSettings.text).toBe(201);
    const before = await f.dump();
    const missing = (response: AdminResponse) => {
      expect(response.status, response.text).toBe(404);
    };
    missing(await f.call('GET', path('beta'), { token: alphaAdmin }));
    missing(await put({ upstream: upstream() }, { tenant: 'beta', etag: '"1"' }));
    missing(await f.call('DELETE', path('beta'), { token: alphaAdmin, headers: { 'if-match': '"1"' } }));
    missing(await f.call('GET', `${path('beta')}/clients`, { token: alphaAdmin }));
    missing(await f.call('GET', `${path('beta')}/grants`, { token: alphaAdmin }));
    missing(await f.call('DELETE', `${path('beta')}/grants/g-beta`, { token: alphaAdmin }));
    const asked = fake.asked.length;
    // Beta's ids through alpha's own routes, plain and dressed up as paths.
    for (const id of ['g-beta', '..%2F..%2Fbeta%2Fauthorization-server%2Fgrants%2Fg-beta', '%2E%2E']) {
      missing(await f.call('DELETE', `${path()}/grants/${id}`, { token: alphaAdmin }));
    }
    expect((await f.call('DELETE', `${path()}/grants/g-beta%00`, { token: alphaAdmin })).status).toBe(400);
    for (const id of ['beta-client', encodeURIComponent('../beta/beta-client')]) {
      missing(await f.call('DELETE', `${path()}/clients/${id}`, { token: alphaAdmin }));
    }
    const listed = await f.call('GET', `${path()}/grants?subject=bob`, { token: alphaAdmin });
    expect(listed.json).toEqual({ grants: [] });
    // Only alpha was asked about, and beta still has everything.
    expect(new Set(fake.asked.slice(asked))).toEqual(new Set(['alpha']));
    expect(fake.grants.get('beta')?.map((grant) => grant.grantId)).toEqual(['g-beta']);
    expect(fake.clients.get('beta')?.map((client) => client.clientId)).toEqual(['beta-client']);
    expect(await f.dump()).toBe(before);
    const betaView = await f.call('GET', path('beta'), { token: operator });
    await f.call('DELETE', path('beta'), { token: operator, headers: { 'if-match': betaView.headers.get('etag')! } });
  });

  it('lists connected clients and grants, revokes them, and audits every removal', async () => {
    const claude = 'https://claude.ai/oauth/mcp-oauth-client-metadata';
    const clients = await f.call('GET', `${path()}/clients`, { token: alphaAdmin });
    expect(clients.status).toBe(200);
    expect(clients.json).toEqual({ clients: [{ clientId: claude, kind: 'metadata-document', redirectUris: [] }] });
    const grants = await f.call('GET', `${path()}/grants?subject=ada&clientId=${encodeURIComponent(claude)}`, {
      token: alphaAdmin,
    });
    expect(grants.json).toEqual({
      grants: [{ grantId: 'g-alpha', subject: 'ada', clientId: claude, scopes: ['staff'] }],
    });
    expect((await f.call('GET', `${path()}/grants?subject=nobody`, { token: alphaAdmin })).json).toEqual({
      grants: [],
    });

    const revoked = await f.call('DELETE', `${path()}/grants/g-alpha`, { token: alphaAdmin });
    expect(revoked.status, revoked.text).toBe(204);
    expect((await f.call('DELETE', `${path()}/grants/g-alpha`, { token: alphaAdmin })).status).toBe(404);
    const deleted = await f.call('DELETE', `${path()}/clients/${encodeURIComponent(claude)}`, { token: alphaAdmin });
    expect(deleted.status, deleted.text).toBe(204);
    expect((await f.call('GET', `${path()}/clients`, { token: alphaAdmin })).json).toEqual({ clients: [] });

    const audit = async (tenant: string, targetType: string) =>
      (await f.call('GET', `/tenants/${tenant}/audit?targetType=${targetType}`, { token: operator })).json.events;
    expect(await audit('alpha', 'oauth-grant')).toEqual([
      expect.objectContaining({
        action: 'delete',
        targetId: 'g-alpha',
        actor: expect.objectContaining({ kind: 'tenant-admin' }),
        before: { grantId: 'g-alpha', subject: 'ada', clientId: claude, scopes: ['staff'] },
      }),
    ]);
    expect(await audit('alpha', 'oauth-client')).toEqual([
      expect.objectContaining({ action: 'delete', targetId: claude }),
    ]);
    expect(await audit('beta', 'oauth-grant')).toEqual([]);
  });
});

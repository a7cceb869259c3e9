import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type AdminFixture, CANARIES, type Engine, eventually, startAdminFixture } from './admin-fixture.js';

// Every admin route's happy path, by a tenant admin on its own tenant and by
// an operator, on both control-plane engines; after each test no response,
// log line or audit row holds a credential.

describe.each<Engine>(['postgres', 'pglite'])('admin API on %s', (engine) => {
  let f: AdminFixture;
  let alphaAdmin: string;
  let operator: string;

  beforeAll(async () => {
    f = await startAdminFixture(engine);
    alphaAdmin = await f.tenantAdmin('alpha');
    operator = await f.operator();
  }, 120_000);
  afterAll(async () => f?.close());
  afterEach(async () => f.expectNoCredentialLeak());

  it('refuses callers without an admin token: 401 with a challenge, as problem details', async () => {
    const none = await f.call('GET', '/tenants/alpha');
    expect(none.status).toBe(401);
    expect(none.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(none.headers.get('www-authenticate')).toContain(
      `resource_metadata="${f.base}/.well-known/oauth-protected-resource/admin/v1/tenants/alpha"`,
    );
    expect(none.json).toMatchObject({ status: 401, type: 'urn:mcpgw:admin:problem:unauthenticated' });
    // A token for the tenant's MCP endpoint is not an admin token (RFC 8707 audience).
    const mcpToken = await f.idp.alpha.token({ aud: `${f.base}/t/alpha/mcp`, scope: 'gateway:admin' });
    expect((await f.call('GET', '/tenants/alpha', { token: mcpToken })).status).toBe(401);
    // The right audience without the tenant's admin scope: authenticated, not an admin.
    const reader = await f.tenantAdmin('alpha', { scope: 'staff' });
    expect((await f.call('GET', '/tenants/alpha', { token: reader })).status).toBe(403);
    const notOperator = await f.operator({ roles: ['viewer'] });
    expect((await f.call('GET', '/tenants', { token: notOperator })).status).toBe(403);
    const metadata = await fetch(`${f.base}/.well-known/oauth-protected-resource/admin/v1/tenants/alpha`);
    expect(await metadata.json()).toMatchObject({
      resource: `${f.base}/admin/v1/tenants/alpha`,
      authorization_servers: [f.idp.alpha.issuer],
    });
    const operators = await fetch(`${f.base}/.well-known/oauth-protected-resource/admin/v1`);
    expect(await operators.json()).toMatchObject({
      resource: `${f.base}/admin/v1`,
      authorization_servers: [f.idp.ops.issuer],
    });
  });

  it('lets operators create, list, read, change, suspend, resume and delete tenants', async () => {
    const created = await f.call('POST', '/tenants', { token: operator, body: { id: 'gamma', name: 'Gamma' } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      id: 'gamma',
      status: 'active',
      managedBy: 'api',
      settings: { name: 'Gamma' },
    });
    expect((await f.call('POST', '/tenants', { token: operator, body: { id: 'gamma' } })).status).toBe(409);
    const list = await f.call('GET', '/tenants', { token: operator });
    expect((list.json.tenants as { id: string; managedBy: string }[]).map((t) => [t.id, t.managedBy])).toEqual([
      ['alpha', 'bootstrap'],
      ['beta', 'bootstrap'],
      ['gamma', 'api'],
    ]);
    const read = await f.call('GET', '/tenants/gamma', { token: operator });
    const etag = read.headers.get('etag')!;
    expect(etag).toBe(created.headers.get('etag'));
    const renamed = await f.call('PUT', '/tenants/gamma', {
      token: operator,
      body: { name: 'Gamma Corp' },
      headers: { 'if-match': etag },
    });
    expect(renamed.status).toBe(200);
    const suspended = await f.call('POST', '/tenants/gamma/suspend', { token: operator });
    expect(suspended.json).toMatchObject({ status: 'suspended', settings: { name: 'Gamma Corp' } });
    expect((await f.call('POST', '/tenants/gamma/resume', { token: operator })).json).toMatchObject({
      status: 'active',
    });
    const current = (await f.call('GET', '/tenants/gamma', { token: operator })).headers.get('etag')!;
    expect((await f.call('DELETE', '/tenants/gamma', { token: operator })).status).toBe(428);
    expect(
      (await f.call('DELETE', '/tenants/gamma', { token: operator, headers: { 'if-match': current } })).status,
    ).toBe(204);
    expect((await f.call('GET', '/tenants/gamma', { token: operator })).status).toBe(404);
  });

  it('lets a tenant admin add a source and a grant, which the MCP endpoint then serves', async () => {
    const source = await f.call('PUT', '/tenants/alpha/sources/more', {
      token: alphaAdmin,
      body: { type: 'static', resources: [{ uri: 'note://alpha/b', name: 'alpha-b', text: 'B' }] },
    });
    expect(source.status, source.text).toBe(201);
    expect(source.json).toMatchObject({ name: 'more', tenantManagedBy: 'bootstrap', secretNames: [] });
    const grant = await f.call('PUT', '/tenants/alpha/grants/more-readers', {
      token: alphaAdmin,
      body: { match: { scopes: ['staff'] }, allow: [{ source: 'more' }] },
    });
    expect(grant.status).toBe(201);
    await eventually(2000, async () => (await f.listNames('alpha')).includes('alpha-b'));
    expect(await f.listNames('alpha')).toEqual(['alpha-a', 'alpha-b']);
    const listed = await f.call('GET', '/tenants/alpha/grants', { token: alphaAdmin });
    expect((listed.json.items as { name: string }[]).map((g) => g.name)).toEqual(['staff', 'more-readers']);
    const one = await f.call('GET', '/tenants/alpha/grants/more-readers', { token: alphaAdmin });
    const deleted = await f.call('DELETE', '/tenants/alpha/grants/more-readers', {
      token: alphaAdmin,
      headers: { 'if-match': one.headers.get('etag')! },
    });
    expect(deleted.status).toBe(204);
    await eventually(2000, async () => !(await f.listNames('alpha')).includes('alpha-b'));
  });

  it('keeps source credentials write-only, and tests a connection with them', async () => {
    const connection = { host: '127.0.0.1', port: 5432, database: f.sourceDb.name, user: 'postgres' };
    const put = await f.call('PUT', '/tenants/alpha/sources/shop', {
      token: alphaAdmin,
      body: { type: 'postgres', connection, schemas: ['shop'], secrets: { 'connection.password': CANARIES[0] } },
    });
    expect(put.status).toBe(201);
    expect(put.json).toMatchObject({ secretNames: ['connection.password'], document: { connection } });
    // Stored (so the leak scan after this test looks for something that exists), yet never shown.
    const store = f.gateway.app.controlPlane!.store;
    expect(await store.openSourceSecrets('alpha', 'shop')).toEqual({ 'connection.password': CANARIES[0] });
    const read = await f.call('GET', '/tenants/alpha/sources/shop', { token: alphaAdmin });
    expect(read.json).toMatchObject({ secretNames: ['connection.password'] });
    const sources = await f.call('GET', '/tenants/alpha/sources', { token: alphaAdmin });
    expect((sources.json.items as { name: string }[]).map((s) => s.name)).toEqual(['notes', 'more', 'shop']);
    const tested = await f.call('POST', '/tenants/alpha/sources/shop/test', { token: alphaAdmin });
    expect(tested.json).toMatchObject({ ok: true });
    // A wrong port: the probe fails within its deadline and says why, without the password.
    const broken = await f.call('PUT', '/tenants/alpha/sources/shop', {
      token: alphaAdmin,
      body: {
        type: 'postgres',
        connection: { ...connection, port: 1 },
        schemas: ['shop'],
        secrets: { 'connection.password': CANARIES[1] },
      },
      headers: { 'if-match': read.headers.get('etag')! },
    });
    expect(broken.status).toBe(200);
    const failed = await f.call('POST', '/tenants/alpha/sources/shop/test', { token: alphaAdmin });
    expect(failed.json).toMatchObject({ ok: false, detail: expect.any(String) });
    const status = await f.call('GET', '/tenants/alpha/status', { token: alphaAdmin });
    expect(status.status).toBe(200);
    expect(status.json).toMatchObject({ tenant: { id: 'alpha', managedBy: 'bootstrap' }, runtime: { serving: true } });
    const names = (status.json.sources as { name: string }[]).map((s) => s.name);
    expect(names).toContain('shop');
    // The serving runtime has the source on the wrong port: its probe says it is down.
    await eventually(5000, async () => {
      const now = await f.call('GET', '/tenants/alpha/status', { token: alphaAdmin });
      const shop = (now.json.sources as { name: string; health?: { ok: boolean } }[]).find((s) => s.name === 'shop');
      return shop?.health?.ok === false;
    });
    const removed = await f.call('DELETE', '/tenants/alpha/sources/shop', {
      token: alphaAdmin,
      headers: { 'if-match': broken.headers.get('etag')! },
    });
    expect(removed.status).toBe(204);
  });

  it("applies a source that cannot start as unavailable, and says so in the write's answer and the tenant's status", async () => {
    const put = await f.call('PUT', '/tenants/alpha/sources/broken', {
      token: operator,
      body: { type: 'files', root: '/no/such/folder/anywhere' },
    });
    expect(put.status, put.text).toBe(201);
    // The writer learns at once which revision it committed and that this replica applied it.
    expect(put.headers.get('mcpgw-applied-revision')).toBe(put.headers.get('mcpgw-revision'));
    expect(put.headers.get('mcpgw-unavailable-sources')).toBe('broken');
    type SourceStatus = { name: string; serving: boolean; lastError?: { message: string } };
    let status: Record<string, unknown> = {};
    const brokenOf = () => (status.sources as SourceStatus[]).find((source) => source.name === 'broken');
    await eventually(3000, async () => {
      status = (await f.call('GET', '/tenants/alpha/status', { token: alphaAdmin })).json;
      return brokenOf()?.lastError !== undefined;
    });
    // Applied all the same: the broken source serves as unavailable, nothing else of the revision waits on it.
    expect(status).toMatchObject({ runtime: { serving: true, upToDate: true } });
    expect((status.runtime as { lastError?: unknown }).lastError).toBeUndefined();
    expect(brokenOf()).toMatchObject({
      serving: false,
      lastError: { message: expect.stringContaining("source 'broken'") },
    });
    expect(await f.listNames('alpha')).toContain('alpha-a');
    const removed = await f.call('DELETE', '/tenants/alpha/sources/broken', {
      token: operator,
      headers: { 'if-match': put.headers.get('etag')! },
    });
    expect(removed.status).toBe(204);
  });

  it('manages issuers and admin role bindings', async () => {
    const name = encodeURIComponent(f.idp.ops.issuer);
    const issuer = await f.call('PUT', `/tenants/alpha/issuers/${name}`, {
      token: alphaAdmin,
      body: { issuer: f.idp.ops.issuer, jwksUri: f.idp.ops.jwksUri },
    });
    expect(issuer.status, issuer.text).toBe(201);
    expect((await f.call('GET', `/tenants/alpha/issuers/${name}`, { token: alphaAdmin })).json).toMatchObject({
      name: f.idp.ops.issuer,
    });
    const binding = await f.call('PUT', '/tenants/alpha/admin-role-bindings/auditors', {
      token: alphaAdmin,
      body: { issuer: f.idp.ops.issuer, subjects: ['audrey'] },
    });
    expect(binding.status).toBe(201);
    expect(
      (await f.call('GET', '/tenants/alpha/admin-role-bindings/auditors', { token: alphaAdmin })).json,
    ).toMatchObject({ name: 'auditors', document: { subjects: ['audrey'] }, version: 1 });
    const bindings = await f.call('GET', '/tenants/alpha/admin-role-bindings', { token: alphaAdmin });
    expect((bindings.json.items as { name: string }[]).map((b) => b.name)).toEqual(['admins', 'auditors']);
    // Audrey, from the newly trusted issuer, is an admin of alpha once the tenant's runtime has the issuer.
    const audrey = await f.idp.ops.token({ sub: 'audrey', aud: `${f.base}/admin/v1/tenants/alpha` });
    await eventually(2000, async () => (await f.call('GET', '/tenants/alpha', { token: audrey })).status === 200);
    for (const [path, etag] of [
      ['/tenants/alpha/admin-role-bindings/auditors', binding.headers.get('etag')!],
      [`/tenants/alpha/issuers/${name}`, issuer.headers.get('etag')!],
    ] as const) {
      expect((await f.call('DELETE', path, { token: alphaAdmin, headers: { 'if-match': etag } })).status).toBe(204);
    }
    expect((await f.call('GET', '/tenants/alpha/issuers', { token: alphaAdmin })).json.items).toHaveLength(1);
  });

  it('flushes the tenant caches and pages through the filtered audit log', async () => {
    expect((await f.call('POST', '/tenants/alpha/cache/flush', { token: alphaAdmin })).status).toBe(204);
    const all = await f.call('GET', '/tenants/alpha/audit?limit=200', { token: alphaAdmin });
    const events = all.json.events as {
      id: string;
      action: string;
      targetType: string;
      targetId: string;
      actor: { kind: string };
    }[];
    expect(events.length).toBeGreaterThan(5);
    expect(events.some((e) => e.actor.kind === 'tenant-admin' && e.targetId === 'more')).toBe(true);
    const first = await f.call('GET', '/tenants/alpha/audit?limit=2&targetType=grant', { token: alphaAdmin });
    const page1 = first.json.events as typeof events;
    expect(page1).toHaveLength(2);
    expect(page1.every((e) => e.targetType === 'grant')).toBe(true);
    const second = await f.call(
      'GET',
      `/tenants/alpha/audit?limit=2&targetType=grant&cursor=${encodeURIComponent(String(first.json.nextCursor))}`,
      { token: alphaAdmin },
    );
    const page2 = second.json.events as typeof events;
    expect(page2.length).toBeGreaterThan(0);
    expect(Number(page2[0]!.id)).toBeLessThan(Number(page1[1]!.id));
    const deletes = await f.call('GET', '/tenants/alpha/audit?action=delete&targetId=more-readers&actor=alice', {
      token: alphaAdmin,
    });
    expect((deletes.json.events as typeof events).map((e) => [e.action, e.targetId])).toEqual([
      ['delete', 'more-readers'],
    ]);
    const future = await f.call('GET', '/tenants/alpha/audit?since=2999-01-01T00:00:00Z', { token: alphaAdmin });
    expect(future.json.events).toEqual([]);
    const badCursor = await f.call('GET', '/tenants/alpha/audit?cursor=nonsense', { token: alphaAdmin });
    expect(badCursor.status).toBe(400);
    expect(badCursor.json.errors).toEqual([{ parameter: 'cursor', detail: expect.any(String) }]);
  });
});

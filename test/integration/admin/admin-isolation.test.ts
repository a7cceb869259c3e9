import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type AdminFixture, type Engine, startAdminFixture, servedAdminRoutes } from './admin-fixture.js';

// Tenant boundaries and write safety of the admin API: every route of the
// table with tenant alpha's admin against tenant beta answers exactly what a
// missing tenant gets; operator-only routes refuse tenant admins; of two
// writers holding one ETag exactly one wins; a refused write changes nothing.

/** Any body will do: the tenant boundary is checked before the body is read. */
const bodyFor = (route: { method: string; body?: unknown }): unknown =>
  route.method === 'GET' || route.body === undefined ? undefined : {};

describe.each<Engine>(['postgres', 'pglite'])('admin API boundaries on %s', (engine) => {
  let f: AdminFixture;
  let alphaAdmin: string;
  let betaAdmin: string;
  const routes = servedAdminRoutes('http://unused');

  beforeAll(async () => {
    f = await startAdminFixture(engine);
    alphaAdmin = await f.tenantAdmin('alpha');
    betaAdmin = await f.tenantAdmin('beta');
    await f.seedSecretSource('beta');
  }, 120_000);
  afterAll(async () => f?.close());
  afterEach(async () => f.expectNoCredentialLeak());

  it("answers alpha's admin on every tenant route of beta exactly as for a missing tenant, and changes nothing", async () => {
    const before = await f.dump();
    const tenantRoutes = routes.filter((route) => route.access === 'tenant');
    expect(tenantRoutes.length).toBeGreaterThan(15);
    for (const route of tenantRoutes) {
      const at = (tenant: string) => route.path.replace('{tenantId}', tenant).replace('{name}', 'notes');
      const headers = { 'if-match': '"1"' };
      const beta = await f.call(route.method, at('beta'), { token: alphaAdmin, body: bodyFor(route), headers });
      const missing = await f.call(route.method, at('no-such-tenant'), {
        token: alphaAdmin,
        body: bodyFor(route),
        headers,
      });
      expect(beta.status, `${route.method} ${route.path}`).toBe(404);
      expect(beta.text, `${route.method} ${route.path}`).toBe(missing.text);
      expect(beta.headers.get('content-type')).toBe(missing.headers.get('content-type'));
      // The operator's view of a missing tenant is the same answer too.
      const operator = await f.call(route.method, at('no-such-tenant'), {
        token: await f.operator(),
        body: bodyFor(route),
        headers,
      });
      if (route.body === undefined) expect(operator.text).toBe(missing.text);
    }
    expect(await f.dump()).toBe(before);
  });

  it('refuses tenant admins on operator-only routes (403), even for their own tenant', async () => {
    const operatorRoutes = routes.filter((route) => route.access === 'operator');
    expect(operatorRoutes.map((route) => route.operationId).sort()).toEqual(
      ['createTenant', 'deleteTenant', 'listTenants', 'replaceTenantSettings', 'resumeTenant', 'suspendTenant'].sort(),
    );
    const before = await f.dump();
    for (const route of operatorRoutes) {
      const response = await f.call(route.method, route.path.replace('{tenantId}', 'alpha'), {
        token: alphaAdmin,
        body: route.body === undefined ? undefined : { id: 'delta' },
      });
      expect(response.status, `${route.method} ${route.path}`).toBe(403);
    }
    expect(await f.dump()).toBe(before);
  });

  it('lets exactly one of two writers holding the same ETag win; the other gets 412', async () => {
    const read = await f.call('GET', '/tenants/beta/grants/staff', { token: betaAdmin });
    const etag = read.headers.get('etag')!;
    const write = (scope: string) =>
      f.call('PUT', '/tenants/beta/grants/staff', {
        token: betaAdmin,
        body: { match: { scopes: [scope] }, allow: [{ source: 'notes' }] },
        headers: { 'if-match': etag },
      });
    const results = await Promise.all([write('staff'), write('crew'), write('team')]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 412, 412]);
    // Two creators of one new name without preconditions: one 201; the other is refused, 409 when
    // both read "absent" before either wrote, 428 when it read after the first committed.
    const create = () =>
      f.call('PUT', '/tenants/beta/admin-role-bindings/owners', { token: betaAdmin, body: { subjects: ['owner'] } });
    const [one, two] = (await Promise.all([create(), create()])).map((r) => r.status).sort();
    expect(one).toBe(201);
    expect([409, 428]).toContain(two);
    const owners = await f.call('GET', '/tenants/beta/admin-role-bindings/owners', { token: betaAdmin });
    expect(owners.json).toMatchObject({ version: 1, document: { subjects: ['owner'] } });
  });

  it('changes nothing on a refused write, and names each offending field', async () => {
    const before = await f.dump();
    const grant = await f.call('GET', '/tenants/beta/grants/staff', { token: betaAdmin });
    const etag = grant.headers.get('etag')!;
    const attempts = [
      // A grant naming a source the tenant does not have: 422, pointing into the body.
      f.call('PUT', '/tenants/beta/grants/staff', {
        token: betaAdmin,
        body: { match: {}, allow: [{ source: 'nope' }] },
        headers: { 'if-match': etag },
      }),
      f.call('PUT', '/tenants/beta/grants/staff', {
        token: betaAdmin,
        body: { match: 5, allow: [] },
        headers: { 'if-match': etag },
      }),
      f.call('PUT', '/tenants/beta/grants/staff', {
        token: betaAdmin,
        body: { match: {}, allow: [{ source: 'notes' }] },
        headers: { 'if-match': '"999"' },
      }),
      f.call('PUT', '/tenants/beta/grants/staff', {
        token: betaAdmin,
        body: { match: {}, allow: [{ source: 'notes' }] },
      }),
      f.call('POST', '/tenants', { token: await f.operator(), body: { id: 'beta' } }),
      f.call('PUT', '/tenants/beta/sources/disk', { token: betaAdmin, body: { type: 'files', root: '/' } }),
      f.call('PUT', '/tenants/beta/sources/env', {
        token: betaAdmin,
        body: { type: 'static', resources: [{ uri: 'x://a', name: 'a', text: { $env: 'SECRETS_KEY' } }] },
      }),
      f.call('DELETE', '/tenants/beta/sources/notes', { token: betaAdmin, headers: { 'if-match': '"1"' } }),
      f.call('PUT', '/tenants/beta/issuers/development', { token: betaAdmin, body: { development: true } }),
    ];
    const results = await Promise.all(attempts);
    expect(
      results.map((r) => r.status),
      results.map((r) => r.text).join('\n'),
    ).toEqual([422, 422, 412, 428, 409, 403, 422, 422, 403]);
    expect(results[0]!.json.errors).toEqual([
      { pointer: '/allow/0/source', detail: expect.stringContaining("'nope'") },
    ]);
    expect(results[1]!.json.errors).toEqual(expect.arrayContaining([expect.objectContaining({ pointer: '/match' })]));
    expect(results[3]!.json.errors).toEqual([{ header: 'If-Match', detail: expect.any(String) }]);
    expect(results[6]!.json.errors).toEqual([{ pointer: '/resources/0/text/$env', detail: expect.any(String) }]);
    // Deleting the source a grant uses: the grant is named, in the tenant's configuration.
    expect(results[7]!.json.errors).toEqual(
      expect.arrayContaining([expect.objectContaining({ location: expect.stringMatching(/^grants\[0\]/) })]),
    );
    for (const result of results) expect(result.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const raw = await fetch(`${f.base}/admin/v1/tenants/beta/grants/staff`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${betaAdmin}`, 'content-type': 'application/json', 'if-match': etag },
      body: '{"match": ',
    });
    expect([raw.status, raw.headers.get('content-type')]).toEqual([400, 'application/problem+json; charset=utf-8']);
    const text = await fetch(`${f.base}/admin/v1/tenants/beta/grants/staff`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${betaAdmin}`, 'content-type': 'text/plain', 'if-match': etag },
      body: 'match',
    });
    expect(text.status).toBe(415);
    expect(await f.dump()).toBe(before);
  });
});

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpPost } from '@mcpgw/test-helpers/mcp-http';
import { type AdminFixture, type AdminResponse, eventually, startAdminFixture } from './admin-fixture.js';

// The database roles a Postgres source may act as for its callers
// (`callerIdentity.roles`) are the operator's: a tenant admin may map their
// callers' claims to those roles, never add one, drop the list or remove
// caller identity altogether (which would read as the login role). Through
// the admin API, as written by each. "Preview as" shows the identity a
// caller would act as.

type Body = Record<string, unknown>;

const pointers = (response: AdminResponse): string[] =>
  ((response.json.errors ?? []) as { pointer?: string }[]).map((error) => error.pointer ?? '(none)');

describe("a Postgres source's role allowlist through the admin API", () => {
  let f: AdminFixture;
  let alphaAdmin: string;
  let operator: string;

  const put = (body: unknown, token: string, etag?: string) =>
    f.call('PUT', '/tenants/alpha/sources/crm', {
      token,
      body,
      ...(etag === undefined ? {} : { headers: { 'if-match': etag } }),
    });
  const source = (callerIdentity: Body | undefined): Body => ({
    type: 'postgres',
    connection: { host: '127.0.0.1', port: 5432, database: f.sourceDb.name, user: 'postgres' },
    schemas: ['shop'],
    ...(callerIdentity === undefined ? {} : { callerIdentity }),
    secrets: { 'connection.password': 'pw' },
  });
  const etag = async () => {
    const response = await f.call('GET', '/tenants/alpha/sources/crm', { token: alphaAdmin });
    expect(response.status, response.text).toBe(200);
    return response.headers.get('etag') ?? '';
  };

  beforeAll(async () => {
    f = await startAdminFixture('pglite');
    alphaAdmin = await f.tenantAdmin('alpha');
    operator = await f.operator();
  }, 120_000);
  afterAll(async () => {
    await f?.close();
  });

  it("refuses a tenant admin's allowlist, even on a new source, and stores nothing", async () => {
    const before = await f.dump();
    const response = await put(source({ roles: ['crm_reader'] }), alphaAdmin);
    expect(response.status, response.text).toBe(403);
    expect(response.json.detail).toBe(
      'Only platform operators may set or change "callerIdentity.roles" of a "postgres" source',
    );
    expect(pointers(response)).toEqual(['/callerIdentity/roles']);
    expect(await f.dump()).toBe(before);
  });

  it('lets the tenant admin change the mapping within the allowlist, never the allowlist itself', async () => {
    const roles = ['crm_sales', 'crm_support'];
    const created = await put(
      source({ roles, mapping: [{ match: { groups: ['sales'] }, role: 'crm_sales' }] }),
      operator,
    );
    expect(created.status, created.text).toBe(201);

    const remapped = await put(
      source({
        roles,
        mapping: [
          { match: { groups: ['support'] }, role: 'crm_support' },
          { match: { groups: ['sales'] }, role: 'crm_sales' },
        ],
        default: { role: 'crm_support' },
      }),
      alphaAdmin,
      await etag(),
    );
    expect(remapped.status, remapped.text).toBe(200);

    const before = await f.dump();
    const widen = [
      // Another role added, reordered, dropped to one, removed with the whole caller identity.
      source({ roles: [...roles, 'postgres'], mapping: [{ match: { groups: ['x'] }, role: 'postgres' }] }),
      source({ roles: [...roles].reverse() }),
      source({ roles: ['crm_sales'] }),
      source(undefined),
    ];
    for (const body of widen) {
      const response = await put(body, alphaAdmin, await etag());
      expect(response.status, `${JSON.stringify(body)}: ${response.text}`).toBe(403);
      expect(response.json.type).toBe('urn:mcpgw:admin:problem:forbidden');
      expect(pointers(response)).toEqual(['/callerIdentity/roles']);
    }
    expect(await f.dump()).toBe(before);
  });

  it('refuses a mapping that names a role outside the allowlist at write time, naming the field', async () => {
    const before = await f.dump();
    const response = await put(
      source({
        roles: ['crm_sales', 'crm_support'],
        mapping: [
          { match: { groups: ['sales'] }, role: 'crm_sales' },
          { match: { groups: ['admins'] }, role: 'postgres' },
        ],
      }),
      alphaAdmin,
      await etag(),
    );
    expect(response.status, response.text).toBe(422);
    expect(response.json.errors).toEqual([
      {
        pointer: '/callerIdentity/mapping/1/role',
        detail: 'role "postgres" is not in callerIdentity.roles, the roles an operator allows this source to act as',
      },
    ]);
    expect(await f.dump()).toBe(before);
  });

  it('previews the database role, settings and application_name a caller would use, as an MCP request then acts', async () => {
    const suffix = randomBytes(4).toString('hex');
    const login = `mcpgw_login_${suffix}`;
    const reader = `mcpgw_reader_${suffix}`;
    await f.sourceDb.sql(`CREATE ROLE ${login} LOGIN NOINHERIT; CREATE ROLE ${reader} NOLOGIN;
      GRANT ${reader} TO ${login}; GRANT USAGE ON SCHEMA shop TO ${reader}; GRANT SELECT ON shop.items TO ${reader}`);
    try {
      const body = {
        type: 'postgres',
        connection: { host: '127.0.0.1', port: 5432, database: f.sourceDb.name, user: login },
        schemas: ['shop'],
        callerIdentity: { roles: [reader], mapping: [{ match: { scopes: ['shop'] }, role: reader }] },
      };
      expect((await f.call('PUT', '/tenants/alpha/sources/shop', { token: operator, body })).status).toBe(201);
      const grant = {
        match: { scopes: ['staff'] },
        allow: [{ source: 'shop', uris: ['db+postgres:///shop/shop/**'] }],
      };
      expect((await f.call('PUT', '/tenants/alpha/grants/shop', { token: alphaAdmin, body: grant })).status).toBe(201);
      await eventually(5000, async () => {
        const status = await f.call('GET', '/tenants/alpha/status', { token: alphaAdmin });
        return (status.json.runtime as { upToDate?: boolean }).upToDate === true;
      });
      const preview = (claims: Body) =>
        f.call('POST', '/tenants/alpha/preview', { token: alphaAdmin, body: { claims } });

      const mapped = await preview({ sub: 'ann', scope: 'staff shop' });
      expect(mapped.status, mapped.text).toBe(200);
      const identities = mapped.json.backendIdentities as { source: string; identity: Body }[];
      expect(identities).toEqual([
        {
          source: 'shop',
          identity: {
            role: reader,
            settings: {
              'mcpgw.subject': 'ann',
              'mcpgw.groups': '[]',
              'mcpgw.scopes': '["shop","staff"]',
              'mcpgw.tenant': 'alpha',
              'mcpgw.client_id': '',
            },
            applicationName: expect.stringMatching(/^mcpgw:shop:[A-Za-z0-9_-]{16}$/),
          },
        },
      ]);
      // The grant's pattern is checked against what this caller's role lists: it matches.
      expect(mapped.json.warnings).toEqual([]);
      const items = (mapped.json.resources as { items: { uri: string }[] }).items.map((item) => item.uri);
      expect(items).toEqual(expect.arrayContaining(['db+postgres:///shop/shop/items']));

      const unmapped = await preview({ sub: 'bo', scope: 'staff' });
      expect(unmapped.json.backendIdentities).toEqual([
        { source: 'shop', identity: expect.objectContaining({ refused: true }) },
      ]);
      const unmappedItems = (unmapped.json.resources as { items: { uri: string }[] }).items;
      expect(unmappedItems.filter((item) => item.uri.startsWith('db+postgres:///shop/'))).toEqual([]);

      // And an MCP request with such a token, through the whole gateway, reads as the preview said.
      const read = async (scope: string) => {
        const token = await f.idp.alpha.token({ sub: 'ann', aud: `${f.base}/t/alpha/mcp`, scope });
        return mcpPost<{ result?: { contents: { text: string }[] }; error?: { code: number } }>(
          `${f.base}/t/alpha/mcp`,
          'resources/read',
          { uri: 'db+postgres:///shop/shop/items' },
          { authorization: `Bearer ${token}` },
        );
      };
      const asReader = await read('staff shop');
      expect(asReader.body.result?.contents[0]?.text).toContain('Table shop.items');
      const refused = await read('staff');
      expect(refused.body.error?.code).toBe(-32602);
    } finally {
      await f.call('DELETE', '/tenants/alpha/grants/shop', { token: alphaAdmin });
      await f.call('DELETE', '/tenants/alpha/sources/shop', { token: operator });
      await f.sourceDb.sql(`DROP OWNED BY ${reader}; DROP ROLE ${reader}; DROP ROLE ${login}`).catch(() => undefined);
    }
  });
});

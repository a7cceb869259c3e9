import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminFixture, type AdminResponse, startAdminFixture } from './admin-fixture.js';

// The database roles a Postgres source may act as for its callers
// (`callerIdentity.roles`) are the operator's: a tenant admin may map their
// callers' claims to those roles, never add one, drop the list or remove
// caller identity altogether (which would read as the login role). Through
// the admin API, as written by each.

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
});

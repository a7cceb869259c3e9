import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminFixture, type AdminResponse, startAdminFixture } from './admin-fixture.js';

// The IAM roles an S3 source may give its callers (`callerIdentity.roleArns`)
// and the STS endpoint their identity tokens go to are the operator's: a
// tenant admin may map their callers' claims to those roles, never add one,
// drop the list, point the tokens elsewhere or remove caller identity (which
// would read with the source's own credential). Through the admin API.

type Body = Record<string, unknown>;

const FINANCE = 'arn:aws:iam::123456789012:role/reports-finance';
const STAFF = 'arn:aws:iam::123456789012:role/reports-staff';
const ADMIN = 'arn:aws:iam::123456789012:role/account-admin';

const pointers = (response: AdminResponse): string[] =>
  ((response.json.errors ?? []) as { pointer?: string }[]).map((error) => error.pointer ?? '(none)');

describe("an S3 source's role allowlist through the admin API", () => {
  let f: AdminFixture;
  let alphaAdmin: string;
  let operator: string;

  const put = (body: unknown, token: string, etag?: string) =>
    f.call('PUT', '/tenants/alpha/sources/reports', {
      token,
      body,
      ...(etag === undefined ? {} : { headers: { 'if-match': etag } }),
    });
  const source = (callerIdentity: Body | undefined, secrets = false): Body => ({
    type: 's3',
    endpoint: 'http://127.0.0.1:9',
    bucket: 'reports',
    forcePathStyle: true,
    changeDetection: { mode: 'off' },
    ...(callerIdentity === undefined ? {} : { callerIdentity }),
    ...(secrets ? { secrets: { 'credentials.accessKeyId': 'AKIDSERVICE', 'credentials.secretAccessKey': 's' } } : {}),
  });
  const etag = async () => {
    const response = await f.call('GET', '/tenants/alpha/sources/reports', { token: alphaAdmin });
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
    const response = await put(source({ roleArns: [ADMIN] }, true), alphaAdmin);
    expect(response.status, response.text).toBe(403);
    expect(response.json.detail).toBe(
      'Only platform operators may set or change "callerIdentity.roleArns" of a "s3" source',
    );
    expect(pointers(response)).toEqual(['/callerIdentity/roleArns']);
    expect(await f.dump()).toBe(before);
  });

  it('lets the tenant admin change the mapping within the allowlist, never the allowlist or the STS endpoint', async () => {
    const roleArns = [FINANCE, STAFF];
    const stsEndpoint = 'http://127.0.0.1:9/sts';
    const created = await put(
      source({ roleArns, stsEndpoint, mapping: [{ match: { groups: ['finance'] }, roleArn: FINANCE }] }, true),
      operator,
    );
    expect(created.status, created.text).toBe(201);

    const remapped = await put(
      source({
        roleArns,
        stsEndpoint,
        mapping: [
          { match: { groups: ['staff'] }, roleArn: STAFF },
          { match: { groups: ['finance'] }, roleArn: FINANCE },
        ],
        default: { roleArn: STAFF },
        sessionTags: { team: 'groups' },
      }),
      alphaAdmin,
      await etag(),
    );
    expect(remapped.status, remapped.text).toBe(200);

    const before = await f.dump();
    const widen: Array<[Body, string]> = [
      [source({ roleArns: [...roleArns, ADMIN], stsEndpoint }), '/callerIdentity/roleArns'],
      [source({ roleArns: [FINANCE], stsEndpoint }), '/callerIdentity/roleArns'],
      [source({ roleArns, stsEndpoint: 'http://127.0.0.1:10/' }), '/callerIdentity/stsEndpoint'],
      [source({ roleArns }), '/callerIdentity/stsEndpoint'],
      [source(undefined), '/callerIdentity/roleArns'],
    ];
    for (const [body, pointer] of widen) {
      const response = await put(body, alphaAdmin, await etag());
      expect(response.status, `${JSON.stringify(body)}: ${response.text}`).toBe(403);
      expect(response.json.type).toBe('urn:mcpgw:admin:problem:forbidden');
      expect(pointers(response)).toEqual([pointer]);
    }
    expect(await f.dump()).toBe(before);
  });

  it('refuses a mapping that names a role outside the allowlist at write time, naming the field', async () => {
    const before = await f.dump();
    const response = await put(
      source({
        roleArns: [FINANCE, STAFF],
        stsEndpoint: 'http://127.0.0.1:9/sts',
        mapping: [
          { match: { groups: ['finance'] }, roleArn: FINANCE },
          { match: { groups: ['admins'] }, roleArn: ADMIN },
        ],
      }),
      alphaAdmin,
      await etag(),
    );
    expect(response.status, response.text).toBe(422);
    expect(response.json.errors).toEqual([
      {
        pointer: '/callerIdentity/mapping/1/roleArn',
        detail: `role "${ADMIN}" is not in callerIdentity.roleArns, the roles an operator allows this source to assume`,
      },
    ]);
    expect(await f.dump()).toBe(before);
  });
});

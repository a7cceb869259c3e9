import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type StartedGateway, startGateway } from '@mcpgw/test-helpers/gateway';
import { type LocalIssuer, startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { mcpPost } from '@mcpgw/test-helpers/mcp-http';
import { type TestDatabase, createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { type S3rverHandle, startS3rver } from '@mcpgw/test-helpers/s3rver';
import { within } from '@mcpgw/test-helpers/within';

// The egress policy through the public admin API (docs/configuration.md,
// "Egress policy"): what a tenant admin points at loopback is refused at
// connect time; the operator's allowlist lets it through; the same
// destination written by an operator (the bootstrap file, an operator's
// admin call) works without it. Two replicas share one control plane: `plain`
// has no EGRESS_ALLOW, `allowing` lists 127.0.0.1.

vi.setConfig({ testTimeout: 60_000, hookTimeout: 90_000 });

const SECRET_TEXT = 'quarterly numbers only the bucket holds';

let s3: S3rverHandle;
let idp: LocalIssuer;
let ops: LocalIssuer;
let rogue: LocalIssuer;
let controlDb: TestDatabase;
let plain: StartedGateway;
let allowing: StartedGateway;

const tenantEntry = () => ({
  id: 'acme',
  auth: { issuers: [{ issuer: idp.issuer, jwksUri: idp.jwksUri }] },
  grants: [{ name: 'staff', match: { scopes: ['staff'] }, allow: [{ source: 'bootstrap-s3' }] }],
  // The bootstrap file's S3 source on loopback: the operator's, so no allowlist is needed.
  sources: [
    {
      id: 'bootstrap-s3',
      type: 's3',
      endpoint: s3.endpoint,
      forcePathStyle: true,
      bucket: 'reports',
      credentials: { accessKeyId: { $env: 'S3_KEY_ID' }, secretAccessKey: { $env: 'S3_SECRET' } },
      changeDetection: { mode: 'off' },
    },
  ],
  adminRoleBindings: [{ name: 'admins', scopes: ['gateway:admin'] }],
});

beforeAll(async () => {
  s3 = await startS3rver({ buckets: ['reports'] });
  await s3.client.send(new PutObjectCommand({ Bucket: 'reports', Key: 'q3.md', Body: SECRET_TEXT }));
  [idp, ops, rogue] = await Promise.all([
    startLocalIssuer({ path: '/acme' }),
    startLocalIssuer({ path: '/ops' }),
    startLocalIssuer({ path: '/rogue' }),
  ]);
  controlDb = await createTestDatabase('egress_control');
  const dir = await mkdtemp(join(tmpdir(), 'gw-egress-'));
  await writeFile(join(dir, 'gateway.json'), JSON.stringify({ tenants: [tenantEntry()] }));
  const env = {
    SECRETS_KEY: 'an egress test server secret of at least thirty-two characters',
    OPERATOR_ISSUER: ops.issuer,
    OPERATOR_JWKS_URI: ops.jwksUri,
    DATABASE_URL: controlDb.url,
    S3_KEY_ID: s3.credentials.accessKeyId,
    S3_SECRET: s3.credentials.secretAccessKey,
  };
  const configPath = join(dir, 'gateway.json');
  plain = await startGateway({ configPath, admin: {}, env });
  allowing = await startGateway({
    configPath,
    admin: {},
    env: { ...env, EGRESS_ALLOW: '127.0.0.1' },
  });
});

afterAll(async () => {
  await plain?.close();
  await allowing?.close();
  await Promise.all([s3?.close(), idp?.close(), ops?.close(), rogue?.close()]);
  await controlDb?.drop();
});

async function admin(
  gateway: StartedGateway,
  method: string,
  path: string,
  token: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; text: string; json: Record<string, unknown> }> {
  const response = await fetch(`${gateway.baseUrl}/admin/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
  };
}

const tenantAdmin = (gateway: StartedGateway) =>
  idp.token({ aud: `${gateway.baseUrl}/admin/v1/tenants/acme`, scope: 'gateway:admin' });
const operator = (gateway: StartedGateway) =>
  ops.token({ sub: 'olga', aud: `${gateway.baseUrl}/admin/v1`, roles: ['gateway-operator'] });

function mcp(gateway: StartedGateway, method: string, params: Record<string, unknown>, token: string) {
  return mcpPost<{
    result?: { resources?: { uri: string }[]; contents?: { text?: string }[] };
    error?: { code: number; message: string };
  }>(`${gateway.baseUrl}/t/acme/mcp`, method, params, { authorization: `Bearer ${token}` });
}

const reader = (gateway: StartedGateway, issuer: LocalIssuer = idp) =>
  issuer.token({ sub: 'reader', aud: `${gateway.baseUrl}/t/acme/mcp`, scope: 'staff' });

type SourceStatus = { name: string; serving: boolean; health?: { ok: boolean; detail?: string } };

/** The source's entry in the tenant status once `gateway` serves the stored revision with it. */
async function servedStatus(gateway: StartedGateway, name: string): Promise<SourceStatus> {
  let found: SourceStatus | undefined;
  await within(10_000, async () => {
    const status = await admin(gateway, 'GET', '/tenants/acme/status', await tenantAdmin(gateway));
    const runtime = status.json.runtime as { upToDate?: boolean } | undefined;
    found = (status.json.sources as SourceStatus[] | undefined)?.find((source) => source.name === name);
    return runtime?.upToDate === true && found?.serving === true;
  });
  return found!;
}

const s3Body = (endpoint: string) => ({
  type: 's3',
  endpoint,
  forcePathStyle: true,
  bucket: 'reports',
  maxAttempts: 1,
  changeDetection: { mode: 'off' },
  secrets: {
    'credentials.accessKeyId': s3.credentials.accessKeyId,
    'credentials.secretAccessKey': s3.credentials.secretAccessKey,
  },
});

describe('egress policy for what a tenant admin configures', () => {
  it("serves the bootstrap file's loopback S3 source and issuer without any allowlist", async () => {
    const listed = await mcp(plain, 'resources/list', {}, await reader(plain));
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.result?.resources?.map((resource) => resource.uri)).toContain('s3:///bootstrap-s3/q3.md');
    const read = await mcp(plain, 'resources/read', { uri: 's3:///bootstrap-s3/q3.md' }, await reader(plain));
    expect(read.body.result?.contents?.[0]?.text).toBe(SECRET_TEXT);
  });

  it('refuses an S3 source a tenant admin points at loopback: nothing from the server reaches the caller', async () => {
    const put = await admin(
      plain,
      'PUT',
      '/tenants/acme/sources/admin-s3',
      await tenantAdmin(plain),
      s3Body(s3.endpoint),
    );
    expect(put.status, put.text).toBe(201);
    const grant = await admin(plain, 'PUT', '/tenants/acme/grants/admin', await tenantAdmin(plain), {
      match: { scopes: ['staff'] },
      allow: [{ source: 'admin-s3' }],
    });
    expect(grant.status, grant.text).toBe(201);

    // The status an admin reads names the destination and the setting to change.
    const status = await servedStatus(plain, 'admin-s3');
    expect(status.health?.ok).toBe(false);
    expect(status.health?.detail).toContain('refused by the egress policy');
    expect(status.health?.detail).toContain('127.0.0.1');
    expect(status.health?.detail).toContain('EGRESS_ALLOW');
    const tested = await admin(plain, 'POST', '/tenants/acme/sources/admin-s3/test', await tenantAdmin(plain));
    expect(tested.status).toBe(200);
    expect(tested.json).toMatchObject({ ok: false, detail: expect.stringContaining('EGRESS_ALLOW') });

    // Callers: the source's objects are missing from the listing and its reads fail.
    const listed = await mcp(plain, 'resources/list', {}, await reader(plain));
    const uris = listed.body.result?.resources?.map((resource) => resource.uri) ?? [];
    expect(uris).toContain('s3:///bootstrap-s3/q3.md');
    expect(uris).not.toContain('s3:///admin-s3/q3.md');
    expect(listed.text).toContain('admin-s3');
    const read = await mcp(plain, 'resources/read', { uri: 's3:///admin-s3/q3.md' }, await reader(plain));
    expect(read.body.error?.code).toBe(-32603);
    expect(read.body.error?.message).toContain('egress policy');
    expect(read.text).not.toContain(SECRET_TEXT);
    expect(read.text).not.toContain('127.0.0.1');
  });

  it('lets the same source through on a replica whose EGRESS_ALLOW names the address', async () => {
    const status = await servedStatus(allowing, 'admin-s3');
    expect(status.health).toEqual({ ok: true });
    const read = await mcp(allowing, 'resources/read', { uri: 's3:///admin-s3/q3.md' }, await reader(allowing));
    expect(read.body.result?.contents?.[0]?.text).toBe(SECRET_TEXT);
  });

  it('refuses a host name that resolves to loopback', async () => {
    const endpoint = s3.endpoint.replace('127.0.0.1', 'localhost');
    const put = await admin(plain, 'PUT', '/tenants/acme/sources/by-name', await tenantAdmin(plain), s3Body(endpoint));
    expect(put.status, put.text).toBe(201);
    const tested = await admin(plain, 'POST', '/tenants/acme/sources/by-name/test', await tenantAdmin(plain));
    expect(tested.json).toMatchObject({ ok: false, detail: expect.stringMatching(/localhost \((127\.0\.0\.1|::1)\)/) });
  });

  it('lets an operator take the source over: the same destination then works without the allowlist', async () => {
    const current = await admin(plain, 'GET', '/tenants/acme/sources/admin-s3', await operator(plain));
    // The same document (credentials stay sealed when a write leaves `secrets` out), now the operator's.
    const put = await admin(
      plain,
      'PUT',
      '/tenants/acme/sources/admin-s3',
      await operator(plain),
      current.json.document,
      { 'if-match': current.headers.get('etag')! },
    );
    expect(put.status, put.text).toBe(200);
    await within(10_000, async () => {
      const read = await mcp(plain, 'resources/read', { uri: 's3:///admin-s3/q3.md' }, await reader(plain));
      return read.body.result?.contents?.[0]?.text === SECRET_TEXT;
    });
  });

  it('refuses an issuer a tenant admin adds with a loopback JWKS URI: its tokens get 401, its keys are never fetched', async () => {
    const name = encodeURIComponent(rogue.issuer);
    const put = await admin(plain, 'PUT', `/tenants/acme/issuers/${name}`, await tenantAdmin(plain), {
      issuer: rogue.issuer,
      jwksUri: rogue.jwksUri,
    });
    expect(put.status, put.text).toBe(201);
    const before = rogue.hitCount('/jwks');
    // Served on both replicas once each has the new revision; the allowing one fetches the keys.
    await within(
      10_000,
      async () => (await mcp(allowing, 'resources/list', {}, await reader(allowing, rogue))).status === 200,
    );
    const afterAllowed = rogue.hitCount('/jwks');
    expect(afterAllowed).toBeGreaterThan(before);
    await servedStatus(plain, 'admin-s3');
    const refused = await mcp(plain, 'resources/list', {}, await reader(plain, rogue));
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('invalid_token');
    expect(rogue.hitCount('/jwks')).toBe(afterAllowed);
    // The tenant's own issuer, from the bootstrap file, still verifies on the same replica.
    expect((await mcp(plain, 'resources/list', {}, await reader(plain))).status).toBe(200);
  });
});

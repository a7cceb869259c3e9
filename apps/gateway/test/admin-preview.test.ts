import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import fc from 'fast-check';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { buildTestApp, type TestApp } from '@mcpgw/test-helpers/gateway';
import { type LocalIssuer, startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { MODERN_META, mcpPost } from '@mcpgw/test-helpers/mcp-http';
import type { AdminPrincipal } from '../src/admin/admin-principal.js';
import { compileGrants } from '@mcpgw/policy';
import { findUnmatchedPatterns } from '../src/admin/preview-pattern-check.js';
import { previewRoutes } from '../src/admin/preview-route.js';
import type { PreviewResponse } from '../src/admin/preview-schema.js';
import { previewResponseSchema } from '../src/admin/preview-schema.js';
import { runAdminCli } from '../src/admin-cli.js';
import { createPrincipalFingerprint } from '../src/principal-fingerprint.js';
import { ADMIN_CLI, runBuilt } from './gateway-process.js';

// "Preview as" over real HTTP: a gateway with two tenants, each trusting its
// own local issuer (real keys, JWKS), the preview route registered as the
// admin API will register it, behind a bearer check of a third local issuer
// (the operators' and admins' identity provider). Every preview is compared
// with what a real MCP request of the same caller gets.

const SECRET = 'preview-test-secret-key-0123456789abcdef';
const ADMIN_AUDIENCE = 'mcpgw-admin';
let gateway: TestApp;
let baseUrl: string;
let idpAcme: LocalIssuer;
let idpGlobex: LocalIssuer;
let idpAdmin: LocalIssuer;
const logLines: string[] = [];

const resource = (tenant: string) => `${baseUrl}/t/${tenant}/mcp`;
const staticSource = (id: string, count: number) => ({
  id,
  type: 'static',
  resources: Array.from({ length: count }, (_, i) => ({
    uri: `test://${id}/${i}`,
    name: `${id}-${i}`,
    text: `secret body ${id} ${i}`,
  })),
});

/** The admin API's bearer check, built for this test from the admin issuer: operator role, or admin scope of one tenant. */
function adminBearerCheck(issuer: LocalIssuer) {
  const keys = createRemoteJWKSet(new URL(issuer.jwksUri));
  return async (request: FastifyRequest): Promise<AdminPrincipal | undefined> => {
    const header = request.headers.authorization;
    if (header === undefined || !header.startsWith('Bearer ')) return undefined;
    let payload;
    try {
      ({ payload } = await jwtVerify(header.slice(7), keys, { issuer: issuer.issuer, audience: ADMIN_AUDIENCE }));
    } catch {
      throw Object.assign(new Error('The admin token is not valid'), { statusCode: 401 });
    }
    const subject = payload.sub ?? '';
    if (payload.role === 'operator') return { kind: 'operator', issuer: issuer.issuer, subject, via: 'bearer' };
    if (typeof payload.tenant === 'string' && String(payload.scope).split(' ').includes('admin')) {
      return { kind: 'tenant-admin', tenantId: payload.tenant, issuer: issuer.issuer, subject, via: 'bearer' };
    }
    throw Object.assign(new Error('Not an admin'), { statusCode: 403 });
  };
}

const operatorToken = () => idpAdmin.token({ aud: ADMIN_AUDIENCE, sub: 'olga', role: 'operator' });
const acmeAdminToken = () => idpAdmin.token({ aud: ADMIN_AUDIENCE, sub: 'ann', tenant: 'acme', scope: 'admin' });

async function preview(tenant: string, body: unknown, adminToken: string) {
  const response = await fetch(`${baseUrl}/admin/v1/tenants/${tenant}/preview`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
    body: JSON.stringify(body),
  });
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

async function previewOk(tenant: string, body: unknown): Promise<PreviewResponse> {
  const answer = await preview(tenant, body, await operatorToken());
  expect(answer.status, answer.text).toBe(200);
  return previewResponseSchema.parse(JSON.parse(answer.text));
}

beforeAll(async () => {
  idpAcme = await startLocalIssuer({ path: '/acme' });
  idpGlobex = await startLocalIssuer({ path: '/globex' });
  idpAdmin = await startLocalIssuer({ path: '/admins' });
  const dir = await mkdtemp(join(tmpdir(), 'gw-preview-'));
  await mkdir(join(dir, 'handbook', 'eng'), { recursive: true });
  await writeFile(join(dir, 'handbook', 'eng', 'setup.md'), '# Setup\n');
  const config = {
    tenants: [
      {
        id: 'acme',
        auth: {
          issuers: [{ issuer: idpAcme.issuer, jwksUri: idpAcme.jwksUri, groupsClaim: 'groups' }],
          requiredScopes: ['mcp:read'],
        },
        grants: [
          { name: 'readers', match: { scopes: ['mcp:read'] }, allow: [{ source: 'docs' }] },
          {
            name: 'finance',
            match: { groups: ['finance'] },
            allow: [{ source: 'ledger', uris: ['test://ledger/1*'] }],
          },
          {
            name: 'engineering',
            match: { groups: ['eng'] },
            allow: [{ source: 'handbook', uris: ['file:///handbook/eng/**', 'file:///handbook/archive/**'] }],
          },
        ],
        sources: [
          staticSource('docs', 150),
          staticSource('ledger', 20),
          { id: 'handbook', type: 'files', root: 'handbook' },
        ],
      },
      { id: 'open', anonymous: true, sources: [staticSource('notes', 3)] },
      {
        id: 'globex',
        auth: { issuers: [{ issuer: idpGlobex.issuer, jwksUri: idpGlobex.jwksUri }] },
        grants: [{ name: 'everyone', match: {}, allow: [{ source: 'plans' }] }],
        sources: [staticSource('plans', 3)],
      },
    ],
  };
  await writeFile(join(dir, 'gateway.json'), JSON.stringify(config));
  const port = await freePort();
  const logStream = new PassThrough();
  logStream.on('data', (chunk: Buffer) => logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
  gateway = await buildTestApp({
    logStream,
    env: {
      HOST: '127.0.0.1',
      PORT: String(port),
      GATEWAY_CONFIG: join(dir, 'gateway.json'),
      SECRETS_KEY: SECRET,
      // Shedding has its own tests; on a busy test machine it would turn a comparison request into a 503.
      SHED_EVENT_LOOP_DELAY_MS: '0',
    },
  });
  const { app } = gateway;
  // As the admin API registers it: under /admin/v1, with its caller check and the app's registry.
  await app.register(previewRoutes, {
    prefix: '/admin/v1',
    authenticate: adminBearerCheck(idpAdmin),
    acquire: (tenantId) => app.tenants.acquire(tenantId),
    principalFingerprint: createPrincipalFingerprint(Buffer.from(SECRET, 'utf8')),
  });
  await app.listen({ host: '127.0.0.1', port });
  baseUrl = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([idpAcme?.close(), idpGlobex?.close(), idpAdmin?.close()]);
});

describe('preview as', () => {
  it('answers exactly what a real MCP request of the same caller sees, with its access-log fingerprint', async () => {
    const claims = { sub: 'alice', scope: 'mcp:read', groups: ['finance'] };
    const answer = await previewOk('acme', { claims });
    expect(answer).toMatchObject({
      tenantId: 'acme',
      from: 'claims',
      admitted: true,
      principal: { issuer: idpAcme.issuer, subject: 'alice', scopes: ['mcp:read'], groups: ['finance'] },
      grants: { unmatched: ['engineering'] },
      resources: { hasMore: true, unavailableSources: [], incompleteSources: [] },
    });
    expect(answer.grants.matched).toEqual([
      { name: 'readers', allow: [{ source: 'docs' }] },
      { name: 'finance', allow: [{ source: 'ledger', uris: ['test://ledger/1*'] }] },
    ]);

    // The same caller for real: a token with the same claims, one resources/list.
    const token = await idpAcme.token({ aud: resource('acme'), ...claims });
    const real = await mcpPost<{ result: { resources: Array<{ uri: string; name: string }> } }>(
      resource('acme'),
      'resources/list',
      { _meta: MODERN_META },
      { authorization: `Bearer ${token}` },
    );
    expect(real.status, real.text).toBe(200);
    expect(answer.resources.items.map((item) => item.uri)).toEqual(real.body.result.resources.map((item) => item.uri));
    expect(answer.resources.items).toHaveLength(100);
    const accessLine = logLines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .findLast((line) => 'principal' in line);
    expect(answer.principalFingerprint).toBe(accessLine?.principal);
    // Descriptors only: no resource body anywhere in the answer.
    expect(JSON.stringify(answer)).not.toContain('secret body');
  });

  it('verifies a pasted token for real: a valid one previews, an expired or foreign one is a 422 naming `token`', async () => {
    const good = await idpAcme.token({ aud: resource('acme'), sub: 'bob', scope: 'mcp:read' });
    const answer = await previewOk('acme', { token: good });
    expect(answer).toMatchObject({ from: 'token', principal: { subject: 'bob' }, admitted: true });
    expect(answer.grants.matched.map((grant) => grant.name)).toEqual(['readers']);

    const now = Math.floor(Date.now() / 1000);
    const refused = [
      await idpAcme.token({ aud: resource('acme'), scope: 'mcp:read', iat: now - 7200, exp: now - 3600 }),
      await idpGlobex.token({ aud: resource('acme'), scope: 'mcp:read' }),
      await idpAcme.token({ aud: resource('globex'), scope: 'mcp:read' }),
      'not-a-jwt',
    ];
    for (const token of refused) {
      const failed = await preview('acme', { token }, await operatorToken());
      expect(failed.status, failed.text).toBe(422);
      expect(failed.type).toContain('application/problem+json');
      const problem = JSON.parse(failed.text) as { errors: Array<{ pointer: string }>; detail: string };
      expect(problem.errors).toEqual([expect.objectContaining({ pointer: '/token' })]);
      expect(problem.detail).toMatch(/^The tenant refuses this token: /);
      expect(failed.text).not.toContain(token);
      expect(failed.text).not.toContain('"resources"');
    }
  });

  it('shows a caller without the required scope as refused, with no resources', async () => {
    const answer = await previewOk('acme', { claims: { sub: 'carol', groups: ['finance'] } });
    expect(answer).toMatchObject({ admitted: false, missingScopes: ['mcp:read'], resources: { items: [] } });
    // The grants still say what would apply once the scope is there.
    expect(answer.grants.matched.map((grant) => grant.name)).toEqual(['finance']);
    // And a real request of that caller is indeed refused.
    const token = await idpAcme.token({ aud: resource('acme'), sub: 'carol', groups: ['finance'] });
    const real = await mcpPost(
      resource('acme'),
      'resources/list',
      { _meta: MODERN_META },
      { authorization: `Bearer ${token}` },
    );
    expect(real.status).toBe(403);
  });

  it('warns of each grant pattern that matches nothing its source lists, and only of those', async () => {
    const answer = await previewOk('acme', { claims: { sub: 'dan', scope: 'mcp:read', groups: ['eng'] } });
    // 'file:///handbook/eng/**' matches the one file there: no warning for it.
    expect(answer.warnings).toEqual([
      {
        kind: 'pattern-matches-nothing',
        grant: 'engineering',
        source: 'handbook',
        pattern: 'file:///handbook/archive/**',
        message: "No resource the source currently lists matches 'file:///handbook/archive/**'",
      },
    ]);
  });

  it('bounds the pattern check: a pattern cut short is "incomplete", never "matches nothing"', async () => {
    const grants = [
      { name: 'nines', match: {}, allow: [{ source: 'ledger', uris: ['test://ledger/*9'] }] },
      { name: 'eights', match: {}, allow: [{ source: 'ledger', uris: ['test://ledger/*8'] }] },
    ];
    const sources = gateway.app.tenants.serving.get('acme')!.catalog.sources;
    const signal = new AbortController().signal;
    const bounded = await findUnmatchedPatterns(grants, compileGrants(grants), sources, {
      signal,
      budget: { callsPerPattern: 1, totalCalls: 1, pageSize: 1 },
    });
    expect(bounded).toEqual([
      expect.objectContaining({
        kind: 'check-incomplete',
        grant: 'nines',
        message: expect.stringContaining('first 1 '),
      }),
      expect.objectContaining({
        kind: 'check-incomplete',
        grant: 'eights',
        message: expect.stringContaining('budget'),
      }),
    ]);
    // With the default budget both are found.
    expect(await findUnmatchedPatterns(grants, compileGrants(grants), sources, { signal })).toEqual([]);
  });

  it('stores nothing under the previewed caller: its first real request is a miss, not a hit', async () => {
    const claims = { sub: 'erin', scope: 'mcp:read', groups: ['eng', 'finance'] };
    const before = gateway.app.cache.metrics().acme!.result;
    await previewOk('acme', { claims });
    await previewOk('acme', { claims });
    const afterPreviews = gateway.app.cache.metrics().acme!.result;
    expect(afterPreviews).toMatchObject({ hits: before.hits, misses: before.misses });
    expect(afterPreviews.bypasses).toBe(before.bypasses + 2);
    const token = await idpAcme.token({ aud: resource('acme'), ...claims });
    await mcpPost(resource('acme'), 'resources/list', { _meta: MODERN_META }, { authorization: `Bearer ${token}` });
    expect(gateway.app.cache.metrics().acme!.result).toMatchObject({ hits: before.hits, misses: before.misses + 1 });
  });

  it('says so for an anonymous tenant: everyone sees everything, whoever is described', async () => {
    const answer = await previewOk('open', { claims: { sub: 'anyone' } });
    expect(answer).toEqual({
      tenantId: 'open',
      from: 'anonymous',
      admitted: true,
      grants: { matched: [], unmatched: [] },
      resources: {
        items: [0, 1, 2].map((i) => ({ uri: `test://notes/${i}`, name: `notes-${i}`, size: 19 })),
        hasMore: false,
        unavailableSources: [],
        incompleteSources: [],
      },
      warnings: [],
    });
  });

  it('names the offending fields of a bad request', async () => {
    const cases: Array<[unknown, string[]]> = [
      [{}, ['/claims']],
      [{ claims: { sub: 'a' }, token: 'x' }, ['/claims']],
      [{ token: 'x', issuer: idpAcme.issuer }, ['/issuer']],
      [{ claims: 'sub=a' }, ['/claims']],
      [{ claims: { sub: 'a' }, extra: 1 }, ['']],
    ];
    for (const [body, pointers] of cases) {
      const answer = await preview('acme', body, await operatorToken());
      expect(answer.status, answer.text).toBe(422);
      const problem = JSON.parse(answer.text) as { type: string; status: number; errors: Array<{ pointer: string }> };
      expect(problem).toMatchObject({ type: 'urn:mcpgw:admin:problem:validation-failed', status: 422 });
      expect(problem.errors.map((error) => error.pointer)).toEqual(pointers);
    }
    const noBody = await fetch(`${baseUrl}/admin/v1/tenants/acme/preview`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await operatorToken()}` },
    });
    expect(noBody.status).toBe(400);
    expect(await noBody.json()).toMatchObject({ type: 'urn:mcpgw:admin:problem:invalid-request' });
    // Claims the tenant's issuer settings cannot map, and an issuer it does not trust: 422.
    const malformed = await preview('acme', { claims: { sub: 'a', scope: 42 } }, await operatorToken());
    expect(malformed.status).toBe(422);
    expect(JSON.parse(malformed.text)).toMatchObject({ errors: [{ pointer: '/claims' }] });
    const untrusted = await preview('acme', { claims: { sub: 'a' }, issuer: idpGlobex.issuer }, await operatorToken());
    expect(untrusted.status).toBe(422);
    expect(JSON.parse(untrusted.text)).toMatchObject({ errors: [{ pointer: '/issuer' }] });
  });
});

describe('robustness', () => {
  it('never answers 5xx, whatever the body: random JSON, and claims of every shape', async () => {
    const admin = await operatorToken();
    const value = fc.oneof(
      fc.string({ maxLength: 20 }),
      fc.integer(),
      fc.double(),
      fc.constant(null),
      fc.array(fc.oneof(fc.string({ maxLength: 10 }), fc.integer()), { maxLength: 4 }),
      fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 }),
    );
    const claims = fc.record(
      { sub: value, scope: value, groups: value, client_id: value, azp: value, exp: value, iss: value },
      { requiredKeys: [] },
    );
    const body = fc.oneof(
      fc.record({ claims, issuer: value }, { requiredKeys: ['claims'] }),
      fc.record({ token: value }),
      fc.jsonValue({ maxDepth: 3 }),
    );
    await fc.assert(
      fc.asyncProperty(body, async (payload) => {
        const response = await gateway.app.inject({
          method: 'POST',
          url: '/admin/v1/tenants/acme/preview',
          headers: {
            host: new URL(baseUrl).host,
            authorization: `Bearer ${admin}`,
            'content-type': 'application/json',
          },
          payload: JSON.stringify(payload),
        });
        expect([200, 400, 422], response.body).toContain(response.statusCode);
      }),
      { numRuns: 200 },
    );
  });
});

describe('who may preview', () => {
  it('gives a tenant admin its own tenant, and for another tenant the very 404 of one that does not exist', async () => {
    const admin = await acmeAdminToken();
    const own = await preview('acme', { claims: { sub: 'x', scope: 'mcp:read' } }, admin);
    expect(own.status).toBe(200);
    const other = await preview('globex', { claims: { sub: 'x' } }, admin);
    const missing = await preview('nope', { claims: { sub: 'x' } }, admin);
    const missingForOperator = await preview('nope', { claims: { sub: 'x' } }, await operatorToken());
    expect(other.status).toBe(404);
    expect(other).toEqual(missing);
    expect(missingForOperator).toEqual(missing);
    // Even a bad body does not tell them apart.
    expect(await preview('globex', {}, admin)).toEqual(missing);
    // The operator sees globex.
    expect((await preview('globex', { claims: { sub: 'x' } }, await operatorToken())).status).toBe(200);
  });

  it('refuses a request without credentials (401) and a token that is not an admin one', async () => {
    const none = await fetch(`${baseUrl}/admin/v1/tenants/acme/preview`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"claims":{"sub":"x"}}',
    });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    const notAdmin = await preview(
      'acme',
      { claims: { sub: 'x' } },
      await idpAdmin.token({ aud: ADMIN_AUDIENCE, sub: 'z' }),
    );
    expect(notAdmin.status).toBe(403);
    // A token of the tenant's own issuer is not an admin credential.
    const tenantToken = await idpAcme.token({ aud: resource('acme'), scope: 'mcp:read' });
    expect((await preview('acme', { claims: { sub: 'x' } }, tenantToken)).status).toBe(401);
  });
});

describe('npm run admin -- preview', () => {
  async function cli(argv: string[], adminToken: string | undefined, stdin = '') {
    let out = '';
    let err = '';
    const code = await runAdminCli(argv, {
      defaultUrl: () => baseUrl,
      adminToken,
      readStdin: () => stdin,
      out: (text) => (out += text),
      err: (text) => (err += text),
    });
    return { code, out, err };
  }

  it('prints a readable summary, or the JSON answer with --json', async () => {
    const claims = JSON.stringify({ sub: 'dan', scope: 'mcp:read', groups: ['eng'] });
    const summary = await cli(['preview', '--tenant', 'acme', '--claims', claims], await operatorToken());
    expect(summary).toMatchObject({ code: 0, err: '' });
    expect(summary.out).toContain(`Tenant acme, as dan of ${idpAcme.issuer} (from claims)`);
    expect(summary.out).toContain('Admitted: yes');
    expect(summary.out).toContain('Grants matched: readers, engineering');
    expect(summary.out).toContain('Resources, first page: 100 (more pages follow)');
    expect(summary.out).toContain(
      "! grant engineering, source handbook: No resource the source currently lists matches 'file:///handbook/archive/**'",
    );

    const token = await idpAcme.token({ aud: resource('acme'), sub: 'bob', scope: 'mcp:read' });
    const json = await cli(
      ['preview', '--tenant', 'acme', '--token', '-', '--json'],
      await operatorToken(),
      `${token}\n`,
    );
    expect(json.code).toBe(0);
    expect(previewResponseSchema.parse(JSON.parse(json.out))).toMatchObject({
      from: 'token',
      principal: { subject: 'bob' },
    });
  });

  it('runs as `npm run admin` does: the built script, the operator token from ADMIN_TOKEN, the gateway at PORT', async () => {
    const run = runBuilt(ADMIN_CLI, ['preview', '--tenant', 'globex', '--claims', '{"sub":"x"}'], {
      env: { ADMIN_TOKEN: await operatorToken(), PORT: new URL(baseUrl).port },
      killAfterMs: 30_000,
    });
    const exit = await run.exited;
    expect(exit, exit.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(exit.stdout).toContain(`Tenant globex, as x of ${idpGlobex.issuer} (from claims)`);
    expect(exit.stdout).toContain('Grants matched: everyone');
    const help = await runBuilt(ADMIN_CLI, ['--help'], { env: {} }).exited;
    expect(help).toMatchObject({ code: 0 });
    expect(help.stdout).toMatch(/^usage: npm run admin -- preview --tenant ID/);
  });

  it('exits 1 with the problem when the gateway refuses, 2 on a usage mistake', async () => {
    const refused = await cli(['preview', '--tenant', 'globex', '--claims', '{"sub":"x"}'], await acmeAdminToken());
    expect(refused).toMatchObject({ code: 1, out: '' });
    expect(refused.err).toBe('admin: HTTP 404 Not found: No such tenant, or not one you administer\n');
    const expired = await cli(['preview', '--tenant', 'acme', '--token', 'not-a-jwt'], await operatorToken());
    expect(expired.code).toBe(1);
    expect(expired.err).toMatch(
      /^admin: HTTP 422 The request content is invalid: The tenant refuses this token: .*\n {2}\/token: /,
    );

    expect((await cli(['preview', '--tenant', 'acme', '--claims', '{"sub":"x"}'], undefined)).code).toBe(2);
    expect((await cli(['preview', '--tenant', 'acme'], 'x')).err).toContain('give exactly one of --claims or --token');
    expect((await cli(['preview', '--tenant', 'acme', '--claims', '{oops'], 'x')).err).toContain(
      '--claims is not JSON',
    );
    expect((await cli(['delete', '--tenant', 'acme'], 'x')).err).toContain("unknown command 'delete'");
    const unreachable = await runAdminCli(
      ['preview', '--tenant', 'acme', '--claims', '{}', '--url', `http://127.0.0.1:${await freePort()}`],
      {
        defaultUrl: () => baseUrl,
        adminToken: 'x',
        readStdin: () => '',
        out: () => undefined,
        err: () => undefined,
      },
    );
    expect(unreachable).toBe(1);
  });
});

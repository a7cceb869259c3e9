import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileGrants } from '@mcpgw/policy';
import type { LocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { MODERN_META, mcpPost } from '@mcpgw/test-helpers/mcp-http';
import { findUnmatchedPatterns } from '@mcpgw/admin';
import { type PreviewFixture, startPreviewFixture } from './admin-preview-fixture.js';

// "Preview as" over real HTTP, the admin API's route served by the app itself
// (admin-preview-fixture.ts): every preview is compared with what a real MCP
// request of the same caller gets.

let fixture: PreviewFixture;
let gateway: PreviewFixture['gateway'];
let baseUrl: string;
let idpAcme: LocalIssuer;
let idpGlobex: LocalIssuer;
let logLines: string[];
const resource = (tenant: string) => fixture.resource(tenant);
const operatorToken = () => fixture.operatorToken();
const acmeAdminToken = () => fixture.acmeAdminToken();
const preview = (tenant: string, body: unknown, adminToken: string) => fixture.preview(tenant, body, adminToken);
const previewOk = (tenant: string, body: unknown) => fixture.previewOk(tenant, body);

beforeAll(async () => {
  fixture = await startPreviewFixture();
  ({ gateway, baseUrl, idpAcme, idpGlobex, logLines } = fixture);
});
afterAll(() => fixture?.close());

/** The access line of the last MCP request the gateway served for `tenant`, as it wrote it. */
function lastAccessLine(tenant: string): Record<string, unknown> {
  const line = logLines
    .map((text) => JSON.parse(text) as Record<string, unknown>)
    .findLast((entry) => entry.msg === 'request' && entry.tenant === tenant && 'principal' in entry);
  if (line === undefined) throw new Error(`no access line for ${tenant}`);
  return line;
}

describe('preview as', () => {
  it("never shows the access log's gateway-wide fingerprint, and names the same caller differently in each tenant", async () => {
    // The same issuer, subject and claims in two tenants that both trust acme's issuer.
    const claims = { sub: 'mallory', scope: 'mcp:read' };
    const inAcme = await previewOk('acme', { claims });
    const inInitech = await previewOk('initech', { claims });
    expect(inAcme.principal).toMatchObject({ issuer: idpAcme.issuer, subject: 'mallory' });
    expect(inInitech.principal).toMatchObject({ issuer: idpAcme.issuer, subject: 'mallory' });
    expect(inAcme.principalFingerprint).toMatch(/^[\w-]{12}$/);
    expect(inInitech.principalFingerprint).toMatch(/^[\w-]{12}$/);
    expect(inAcme.principalFingerprint).not.toBe(inInitech.principalFingerprint);

    // The caller for real in both tenants: what the gateway writes to its access log.
    for (const tenant of ['acme', 'initech']) {
      const token = await idpAcme.token({ aud: resource(tenant), ...claims });
      const real = await mcpPost(
        resource(tenant),
        'resources/list',
        { _meta: MODERN_META },
        {
          authorization: `Bearer ${token}`,
        },
      );
      expect(real.status, real.text).toBe(200);
    }
    const acmeLine = lastAccessLine('acme');
    const initechLine = lastAccessLine('initech');
    // One caller, one gateway-wide fingerprint: the one an admin of either tenant must not be able to compute.
    expect(acmeLine.principal).toBe(initechLine.principal);
    for (const shown of [inAcme.principalFingerprint, inInitech.principalFingerprint]) {
      expect(shown).not.toBe(acmeLine.principal);
    }
    // Each tenant's own lines carry the fingerprint its admins are shown, and only those.
    expect(acmeLine.tenantPrincipal).toBe(inAcme.principalFingerprint);
    expect(initechLine.tenantPrincipal).toBe(inInitech.principalFingerprint);
    const previewLines = logLines
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .filter((entry) => entry.msg === 'admin preview');
    expect(previewLines.map((entry) => entry.previewed)).not.toContain(acmeLine.principal);
  });

  it("answers exactly what a real MCP request of the same caller sees, with the access line's tenant fingerprint", async () => {
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
    const accessLine = lastAccessLine('acme');
    // The tenant's own fingerprint of the caller, which the line carries as well: never the gateway-wide one.
    expect(answer.principalFingerprint).toBe(accessLine.tenantPrincipal);
    expect(answer.principalFingerprint).not.toBe(accessLine.principal);
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
      revision: expect.any(Number),
      storedRevision: answer.revision,
      upToDate: true,
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
      [{ claims: { sub: 'a' }, extra: 1 }, ['/extra']],
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
    // The admin API's challenge points at the tenant's admin resource metadata (RFC 9728 section 5.1).
    expect(none.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${baseUrl}/.well-known/oauth-protected-resource/admin/v1/tenants/acme"`,
    );
    const notAdmin = await preview('acme', { claims: { sub: 'x' } }, await fixture.nonAdminToken());
    expect(notAdmin.status).toBe(403);
    // A token of the tenant's own issuer is not an admin credential.
    const tenantToken = await idpAcme.token({ aud: resource('acme'), scope: 'mcp:read' });
    expect((await preview('acme', { claims: { sub: 'x' } }, tenantToken)).status).toBe(401);
  });
});

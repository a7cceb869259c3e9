/**
 * The console's "Connected apps" page (docs/admin-console.md) over HTTP, as a
 * browser without pixels drives it: a real MCP client registers at the demo
 * tenant's hosted authorization server (RFC 7591) and runs the code flow with
 * PKCE through the demo login, so a real client and a real grant exist; the
 * demo admin sees both on the page and revokes them with its forms, after
 * which the grant's refresh token is refused at the token endpoint. Tenant
 * acme's admin can neither see nor revoke demo's. The gateway is the real one
 * (buildApp over PGlite).
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followToRedirectUri } from '@mcpgw/test-helpers/follow-redirects';
import type { TestApp } from '@mcpgw/test-helpers/gateway';
import type { Jar } from './admin-sign-in-harness.js';
import { startConsoleTestGateway, type ConsoleTestGateway } from './console-test-gateway.js';
import { auditOf, cookieHeader, store } from './admin-sign-in-harness.js';

const REDIRECT_URI = 'http://127.0.0.1:9/callback';
const SCOPE = 'mcp:read';

let built: TestApp;
let baseUrl: string;
const issuerOf = (id: string) => `${baseUrl}/t/${id}/oauth`;
const resourceOf = (id: string) => `${baseUrl}/t/${id}/mcp`;

let gateway: ConsoleTestGateway;

beforeAll(async () => {
  gateway = await startConsoleTestGateway({ source: 'notes', uri: 'notes://a', name: 'a', text: 'secret of acme' });
  ({ built, baseUrl } = gateway);
});
afterAll(() => built?.close());

const page = (jar: Jar, path: string) => gateway.page(jar, path);

async function post(jar: Jar, path: string, fields: Record<string, string>) {
  const response = await fetch(new URL(path, baseUrl), {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: cookieHeader(jar), origin: baseUrl, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  store(jar, response);
  return { status: response.status, html: await response.text(), location: response.headers.get('location') };
}

const csrfOf = (html: string): string => /name="csrf" value="([^"]*)"/.exec(html)?.[1] ?? '';

async function signIn(tenantId: string, jar: Jar): Promise<void> {
  const start = await page(jar, `/admin/tenants/${tenantId}/sign-in`);
  const login = await page(jar, start.response.headers.get('location')!);
  const reached = await followToRedirectUri(
    new URL(login.response.headers.get('location')!),
    `${baseUrl}/admin/v1/tenants/${tenantId}/callback`,
  );
  expect((await page(jar, `${reached.pathname}${reached.search}`)).status).toBe(303);
}

async function tokenRequest(tenantId: string, form: Record<string, string>) {
  const response = await fetch(`${issuerOf(tenantId)}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** An MCP client as the SDK connects: RFC 7591 registration, then the code flow with PKCE (S256) and RFC 8707 resource. */
async function connectClient(tenantId: string, clientName: string): Promise<{ clientId: string; refresh: string }> {
  const registered = await fetch(`${issuerOf(tenantId)}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: clientName,
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      scope: `${SCOPE} offline_access`,
    }),
  });
  expect(registered.status).toBe(201);
  const clientId = String(((await registered.json()) as { client_id: string }).client_id);
  const verifier = randomBytes(32).toString('base64url');
  const authorize = new URL(`${issuerOf(tenantId)}/authorize`);
  for (const [key, value] of Object.entries({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    scope: SCOPE,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    resource: resourceOf(tenantId),
    state: 'st',
  })) {
    authorize.searchParams.set(key, value);
  }
  const callback = await followToRedirectUri(authorize, REDIRECT_URI);
  const redeemed = await tokenRequest(tenantId, {
    grant_type: 'authorization_code',
    code: callback.searchParams.get('code') ?? '',
    redirect_uri: REDIRECT_URI,
    client_id: clientId,
    code_verifier: verifier,
    resource: resourceOf(tenantId),
  });
  expect(redeemed.status).toBe(200);
  return { clientId, refresh: String(redeemed.body.refresh_token) };
}

const refreshWith = (clientId: string, refresh: string) =>
  tokenRequest('demo', { grant_type: 'refresh_token', refresh_token: refresh, client_id: clientId });

/** Refreshes as the client would, keeping the new refresh token (the server may rotate it). */
async function expectStillRefreshes(client: { clientId: string; refresh: string }): Promise<void> {
  const refreshed = await refreshWith(client.clientId, client.refresh);
  expect(refreshed.status).toBe(200);
  if (typeof refreshed.body.refresh_token === 'string') client.refresh = refreshed.body.refresh_token;
}

describe('the console’s connected apps page', () => {
  const demoAdmin: Jar = new Map();
  const acmeAdmin: Jar = new Map();
  let client: { clientId: string; refresh: string };

  beforeAll(async () => {
    client = await connectClient('demo', 'Notes <b>tool</b>');
    await signIn('demo', demoAdmin);
    await signIn('acme', acmeAdmin);
  });

  it('is a tab of the tenant and lists the registered client and the user’s grant', async () => {
    const listed = await page(demoAdmin, '/admin/tenants/demo/connected-apps');
    expect(listed.status).toBe(200);
    expect(listed.html).toMatch(/href="\/admin\/tenants\/demo\/connected-apps"\s*aria-current="page"/);
    // The client's stated name is escaped, its redirect URI shown by host.
    expect(listed.html).toContain('Notes &lt;b&gt;tool&lt;/b&gt;');
    expect(listed.html).not.toContain('<b>tool</b>');
    expect(listed.html).toContain(`<code>${client.clientId}</code>`);
    expect(listed.html).toContain('<code>127.0.0.1:9</code>');
    expect(listed.html).toMatch(/<th scope="row"><code>demo-user<\/code><\/th>[^]*?<code>mcp:read<\/code>/);
    expect(listed.html).toContain('name="action" value="revoke-grant"');
    // The overview's navigation links to it too.
    expect((await page(demoAdmin, '/admin/tenants/demo/')).html).toContain('>Connected apps</a');
  });

  it('refuses a revoke without the CSRF token and changes nothing', async () => {
    const html = (await page(demoAdmin, '/admin/tenants/demo/connected-apps')).html;
    const grantId = grantIdOf(html, client.clientId);
    const refused = await post(demoAdmin, '/admin/tenants/demo/connected-apps', {
      action: 'revoke-grant',
      id: grantId,
    });
    expect(refused.status).toBe(403);
    await expectStillRefreshes(client);
  });

  it('keeps tenant acme’s admin from seeing or revoking demo’s clients and grants', async () => {
    const other = await page(acmeAdmin, '/admin/tenants/demo/connected-apps');
    const missing = await page(acmeAdmin, '/admin/tenants/nosuch/connected-apps');
    expect(other.status).toBe(404);
    expect(other.html).toBe(missing.html);
    expect(other.html).not.toContain(client.clientId);
    const own = await page(acmeAdmin, '/admin/tenants/acme/connected-apps');
    expect(own.status).toBe(200);
    expect(own.html).not.toContain(client.clientId);
    const csrf = csrfOf(own.html);
    const grantId = grantIdOf((await page(demoAdmin, '/admin/tenants/demo/connected-apps')).html, client.clientId);
    // Posted to demo's page: the 404 of a tenant that is not acme's.
    const across = await post(acmeAdmin, '/admin/tenants/demo/connected-apps', {
      csrf,
      action: 'revoke-client',
      id: client.clientId,
    });
    expect(across.status).toBe(404);
    // Demo's ids through acme's own page: ids that do not exist there.
    for (const [action, id] of [
      ['revoke-client', client.clientId],
      ['revoke-grant', grantId],
    ] as const) {
      const refused = await post(acmeAdmin, '/admin/tenants/acme/connected-apps', { csrf, action, id });
      expect(refused.status).toBe(404);
      expect(refused.html).toMatch(/role="alert"[^]*No such (client|grant) in this tenant/);
    }
    await expectStillRefreshes(client);
    expect((await page(demoAdmin, '/admin/tenants/demo/connected-apps')).html).toContain(grantId);
  });

  it('revokes a grant: its refresh token then fails, and the removal is audited', async () => {
    const fresh = await connectClient('demo', 'Second tool');
    const html = (await page(demoAdmin, '/admin/tenants/demo/connected-apps')).html;
    const grantId = grantIdOf(html, fresh.clientId);
    const revoked = await post(demoAdmin, '/admin/tenants/demo/connected-apps', {
      csrf: csrfOf(html),
      action: 'revoke-grant',
      id: grantId,
    });
    expect(revoked.status).toBe(303);
    expect(revoked.location).toBe('/admin/tenants/demo/connected-apps?done=grant');
    const after = await page(demoAdmin, revoked.location!);
    expect(after.html).toContain('Grant revoked');
    expect(after.html).not.toContain(`value="${grantId}"`);
    const refused = await refreshWith(fresh.clientId, fresh.refresh);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_grant');
    const audited = (await auditOf(built.app, 'demo')).find((event) => event.targetId === grantId);
    expect(audited).toMatchObject({ action: 'delete', targetType: 'oauth-grant', actor: { kind: 'tenant-admin' } });
    // Twice: the API's 404, shown on the page.
    const again = await post(demoAdmin, '/admin/tenants/demo/connected-apps', {
      csrf: csrfOf(html),
      action: 'revoke-grant',
      id: grantId,
    });
    expect(again.status).toBe(404);
    expect(again.html).toContain('No such grant in this tenant');
  });

  it("marks the console's own sign-in client and revokes it only with its confirmation checked", async () => {
    const html = (await page(demoAdmin, '/admin/tenants/demo/connected-apps')).html;
    // The demo admin signed in through the hosted server with the tenant's adminSignIn client.
    const row = html.split('<tr>').find((candidate) => candidate.includes('<code>mcpgw-admin-demo</code>')) ?? '';
    expect(row).toContain("This console's own sign-in client");
    expect(row).toMatch(/<input type="checkbox" name="confirm-console-client" value="yes" required \/>/);
    // Any other client's revoke asks for nothing more.
    const other = html.split('<tr>').find((candidate) => candidate.includes(`<code>${client.clientId}</code>`)) ?? '';
    expect(other).not.toContain('confirm-console-client');
    const unconfirmed = await post(demoAdmin, '/admin/tenants/demo/connected-apps', {
      csrf: csrfOf(html),
      action: 'revoke-client',
      id: 'mcpgw-admin-demo',
    });
    expect(unconfirmed.status).toBe(422);
    expect(unconfirmed.html).toContain('This is the console&#39;s own sign-in client: revoking it signs every admin');
    // Nothing changed: the client is still there and the admin still signed in.
    const still = await page(demoAdmin, '/admin/tenants/demo/connected-apps');
    expect(still.status).toBe(200);
    expect(still.html).toContain('<code>mcpgw-admin-demo</code>');
  });

  it('revokes a client with its grants, and refuses a form that names no revoke', async () => {
    const html = (await page(demoAdmin, '/admin/tenants/demo/connected-apps')).html;
    const csrf = csrfOf(html);
    const unnamed = await post(demoAdmin, '/admin/tenants/demo/connected-apps', { csrf, action: 'drop', id: 'x' });
    expect(unnamed.status).toBe(422);
    const revoked = await post(demoAdmin, '/admin/tenants/demo/connected-apps', {
      csrf,
      action: 'revoke-client',
      id: client.clientId,
    });
    expect(revoked.status).toBe(303);
    const after = await page(demoAdmin, revoked.location!);
    expect(after.html).toContain('Client revoked');
    expect(after.html).not.toContain(client.clientId);
    expect((await refreshWith(client.clientId, client.refresh)).status).toBeGreaterThanOrEqual(400);
    const audited = (await auditOf(built.app, 'demo')).find((event) => event.targetId === client.clientId);
    expect(audited).toMatchObject({ action: 'delete', targetType: 'oauth-client' });
  });
});

/** The id a grant row's revoke form posts, for the grant of the given client. */
function grantIdOf(html: string, clientId: string): string {
  const rows = html.split('<tr>').filter((row) => row.includes('value="revoke-grant"') && row.includes(clientId));
  const id = /name="id"\s+value="([^"]*)"/.exec(rows[0] ?? '')?.[1];
  expect(id).toBeDefined();
  return id!;
}

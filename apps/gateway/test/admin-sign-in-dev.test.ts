/**
 * Admin browser sign-in against the built-in development authorization server
 * (docs/admin-sign-in.md): the demo tenant's admin signs in with no browser
 * (fetch following redirects with cookie jars), gets a session cookie with
 * the attributes RFC 6265bis asks for, reads who they are and the CSRF token,
 * and a state-changing request of the admin API needs that token and the
 * gateway's Origin; a bearer-token request needs neither. The gateway is the
 * real one: buildApp's admin API over a control plane (PGlite), whose token
 * check (audience = the tenant's admin resource, the tenant's admin role
 * bindings) decides who is an admin, and whose audit log shows what a write did.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@mcpgw/test-helpers/free-port';
import type { TestApp } from '@mcpgw/test-helpers/gateway';
import { buildTestApp } from '@mcpgw/test-helpers/gateway';
import { demoBootstrap } from '../src/demo.js';
import { authorizationServerIssuer } from '@mcpgw/authorization-server';
import { mintTenantToken, UsageError } from '../src/token-cli.js';
import { tenantAdminResource } from '@mcpgw/admin';
import type { Jar } from './admin-sign-in-harness.js';
import {
  ADMIN_SCOPE,
  SECRET,
  auditOf,
  cookieHeader,
  putGrant,
  signInThroughBrowser,
  stateOf,
} from './admin-sign-in-harness.js';

let built: TestApp;
let baseUrl: string;
let devIssuer: string;

beforeAll(async () => {
  const port = await freePort();
  built = await buildTestApp({
    bootstrap: demoBootstrap(),
    env: { HOST: '127.0.0.1', PORT: String(port), SECRETS_KEY: SECRET },
    admin: {},
  });
  baseUrl = `http://127.0.0.1:${port}`;
  devIssuer = authorizationServerIssuer(baseUrl, 'demo');
  await built.app.listen({ host: '127.0.0.1', port });
});
afterAll(() => built?.close());

describe('admin sign-in through the development authorization server', () => {
  const jar: Jar = new Map();
  let csrfToken: string;

  it('signs the demo admin in and sets a sealed, HttpOnly, Lax, tenant-scoped session cookie', async () => {
    const { login, loginCookies, callback, callbackCookies } = await signInThroughBrowser(baseUrl, 'demo', jar);
    // The authorization request (RFC 6749 §4.1.1, RFC 7636 §4.3, RFC 8707 §2).
    const authorize = new URL(login.headers.get('location')!);
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${devIssuer}/authorize`);
    expect(authorize.searchParams.get('client_id')).toBe('mcpgw-admin-demo');
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The tenant's admin resource: the audience the admin API wants of a demo admin's token.
    expect(authorize.searchParams.get('resource')).toBe(tenantAdminResource(baseUrl, 'demo'));
    expect(authorize.searchParams.get('resource')).toBe(`${baseUrl}/admin/v1/tenants/demo`);
    expect(authorize.searchParams.get('scope')).toBe(`openid ${ADMIN_SCOPE}`);
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${baseUrl}/admin/v1/tenants/demo/callback`);
    expect(authorize.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{16,}$/);
    // The state and verifier cookies, scoped to the tenant's admin path, Lax so the IdP's redirect brings them back.
    expect(loginCookies).toHaveLength(2);
    for (const cookie of loginCookies) {
      expect(cookie).toMatch(/; Path=\/admin\/v1\/tenants\/demo(;|$)/);
      expect(cookie).toMatch(/; HttpOnly/);
      expect(cookie).toMatch(/; SameSite=Lax/);
    }

    expect(callback.status).toBe(303);
    expect(callback.headers.get('location')).toBe('/admin/v1/tenants/demo/session');
    const session = callbackCookies.find((cookie) => cookie.startsWith('mcpgw-admin-session='));
    expect(session).toBeDefined();
    // The console's pages under /admin/tenants/demo/ need it too; the tenant is sealed inside.
    expect(session).toMatch(/; Path=\/admin(;|$)/);
    expect(session).toMatch(/; HttpOnly/);
    expect(session).toMatch(/; SameSite=Lax/);
    expect(session).not.toMatch(/; Secure/); // http://127.0.0.1: Secure only when PUBLIC_URL is https
    const maxAge = Number(/; Max-Age=(\d+)/.exec(session!)?.[1]);
    // Bounded by the access token's lifetime (the hosted server's default accessTokenSeconds: 15 minutes).
    expect(maxAge).toBeGreaterThan(800);
    expect(maxAge).toBeLessThanOrEqual(900);
    // The flow's cookies are cleared at the callback: a state is used once.
    expect(jar.has('mcpgw-admin-oauth-state')).toBe(false);
    expect(jar.has('mcpgw-admin-oauth-verifier')).toBe(false);
    // Sealed: neither the subject nor any token is readable in it.
    const value = jar.get('mcpgw-admin-session')!;
    expect(value).not.toContain('demo-user');
    expect(Buffer.from(value.split('.').at(-1)!, 'base64url').toString('latin1')).not.toContain('demo-user');
  });

  it('answers GET .../session with the principal and the CSRF token', async () => {
    const response = await fetch(`${baseUrl}/admin/v1/tenants/demo/session`, {
      headers: { cookie: cookieHeader(jar) },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body.principal).toEqual({
      kind: 'tenant-admin',
      tenantId: 'demo',
      issuer: devIssuer,
      subject: 'demo-user',
      via: 'session',
    });
    expect(body.csrfHeader).toBe('x-csrf-token');
    csrfToken = body.csrfToken as string;
    expect(csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  // A real write of the admin API: a grant of the demo tenant's handbook, recorded in the audit log.
  const write = (name: string, headers: Record<string, string>) =>
    putGrant(baseUrl, 'demo', name, { cookie: cookieHeader(jar), ...headers }, 'handbook');

  it('refuses a state-changing request without the CSRF token (403 problem), and changes nothing', async () => {
    const before = await stateOf(built.app, 'demo');
    const attempts: Array<Record<string, string>> = [
      { origin: baseUrl },
      { origin: baseUrl, 'x-csrf-token': 'A'.repeat(43) },
      { 'x-csrf-token': csrfToken },
      { origin: baseUrl, 'x-csrf-token': csrfToken, 'sec-fetch-site': 'cross-site' },
    ];
    for (const headers of attempts) {
      const response = await write('refused', headers);
      expect(response.status).toBe(403);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const problem = (await response.json()) as Record<string, unknown>;
      expect(problem).toMatchObject({
        type: 'urn:mcpgw:admin:problem:csrf-refused',
        status: 403,
        code: 'csrf-refused',
      });
      expect(problem.detail).toEqual(expect.any(String));
    }
    // Nor does the cache flush, another write, run without the token.
    const flush = await fetch(`${baseUrl}/admin/v1/tenants/demo/cache/flush`, {
      method: 'POST',
      headers: { cookie: cookieHeader(jar), origin: baseUrl },
    });
    expect(flush.status).toBe(403);
    expect(await stateOf(built.app, 'demo')).toBe(before);
    expect(await built.app.controlPlane!.store.getEntity('demo', 'grant', 'refused')).toBeUndefined();
  });

  it('admits it with the token and the gateway Origin, and audits it as the signed-in admin', async () => {
    const response = await write('by-session', {
      origin: baseUrl,
      'x-csrf-token': csrfToken,
      'sec-fetch-site': 'same-origin',
    });
    expect(response.status).toBe(201);
    expect(await built.app.controlPlane!.store.getEntity('demo', 'grant', 'by-session')).toBeDefined();
    const [event] = await auditOf(built.app, 'demo');
    expect(event).toMatchObject({
      action: 'create',
      targetType: 'grant',
      targetId: 'by-session',
      actor: { kind: 'tenant-admin', subject: 'demo-user', issuer: devIssuer },
    });
    const flush = await fetch(`${baseUrl}/admin/v1/tenants/demo/cache/flush`, {
      method: 'POST',
      headers: { cookie: cookieHeader(jar), origin: baseUrl, 'x-csrf-token': csrfToken },
    });
    expect(flush.status).toBe(204);
  });

  it('needs no CSRF token from a bearer-token caller', async () => {
    // What `npm run token -- --tenant demo --admin` prints.
    const { token, resource, scope } = await mintTenantToken(built.config, { tenant: 'demo', admin: true });
    expect(resource).toBe(`${baseUrl}/admin/v1/tenants/demo`);
    expect(scope).toBe(ADMIN_SCOPE);
    const response = await putGrant(
      baseUrl,
      'demo',
      'by-bearer',
      { authorization: `Bearer ${token}`, cookie: cookieHeader(jar) },
      'handbook',
    );
    expect(response.status).toBe(201);
    expect((await auditOf(built.app, 'demo'))[0]).toMatchObject({
      targetId: 'by-bearer',
      actor: { subject: 'demo-user' },
    });
  });

  it('mints no admin token for a tenant without browser sign-in', async () => {
    const { document, configDir } = demoBootstrap();
    const tenants = (document as { tenants: Array<Record<string, unknown>> }).tenants;
    const without = await buildTestApp({
      bootstrap: { configDir, document: { tenants: tenants.map(({ adminSignIn: _, ...rest }) => rest) } },
      env: { HOST: '127.0.0.1', PORT: '8080' },
    });
    try {
      await expect(mintTenantToken(without.config, { tenant: 'demo', admin: true })).rejects.toThrow(UsageError);
    } finally {
      await without.close();
    }
  });

  it('logs out (a write like any other: CSRF token required) and the cookie is cleared', async () => {
    const refused = await fetch(`${baseUrl}/admin/v1/tenants/demo/logout`, {
      method: 'POST',
      headers: { cookie: cookieHeader(jar), origin: baseUrl },
    });
    expect(refused.status).toBe(403);
    const response = await fetch(`${baseUrl}/admin/v1/tenants/demo/logout`, {
      method: 'POST',
      headers: { cookie: cookieHeader(jar), origin: baseUrl, 'x-csrf-token': csrfToken },
    });
    expect(response.status).toBe(204);
    const cleared = response.headers.getSetCookie().find((cookie) => cookie.startsWith('mcpgw-admin-session='));
    expect(cleared).toMatch(/^mcpgw-admin-session=;/);
    // The console's pages under /admin/tenants/demo/ need it too; the tenant is sealed inside.
    expect(cleared).toMatch(/; Path=\/admin(;|$)/);
  });
});

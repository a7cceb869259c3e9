/**
 * Admin browser sign-in against the built-in development authorization server
 * (docs/admin-sign-in.md): the demo tenant's admin signs in with no browser
 * (fetch following redirects with cookie jars), gets a session cookie with
 * the attributes RFC 6265bis asks for, reads who they are and the CSRF token,
 * and a state-changing request needs that token and the gateway's Origin;
 * a bearer-token request needs neither.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '@mcpgw/core';
import { freePort } from '@mcpgw/test-helpers/free-port';
import type { TestApp } from '@mcpgw/test-helpers/gateway';
import { buildTestApp } from '@mcpgw/test-helpers/gateway';
import { demoBootstrap } from '../src/demo.js';
import { devAuthorizationServerIssuer } from '../src/dev-authorization-server.js';
import { mintTenantToken, UsageError } from '../src/token-cli.js';
import type { Jar, Writes } from './admin-sign-in-harness.js';
import {
  ADMIN_SCOPE,
  SECRET,
  cookieHeader,
  scopeResolver,
  tenantAdminResource,
  signInThroughBrowser,
  wireSignIn,
} from './admin-sign-in-harness.js';

let built: TestApp;
let baseUrl: string;
let devIssuer: string;
let writes: Writes;

beforeAll(async () => {
  const port = await freePort();
  built = await buildTestApp({
    bootstrap: demoBootstrap(),
    env: { HOST: '127.0.0.1', PORT: String(port), SECRETS_KEY: SECRET },
  });
  baseUrl = `http://127.0.0.1:${port}`;
  devIssuer = devAuthorizationServerIssuer(baseUrl);
  const resolve = scopeResolver(devIssuer, [tenantAdminResource(baseUrl, 'demo')], built.app.log as unknown as Logger);
  ({ writes } = await wireSignIn(built, baseUrl, resolve, devIssuer));
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
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${devIssuer}/auth`);
    expect(authorize.searchParams.get('client_id')).toBe('mcpgw-admin-demo');
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorize.searchParams.get('resource')).toBe(tenantAdminResource(baseUrl, 'demo'));
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
    expect(session).toMatch(/; Path=\/admin\/v1\/tenants\/demo(;|$)/);
    expect(session).toMatch(/; HttpOnly/);
    expect(session).toMatch(/; SameSite=Lax/);
    expect(session).not.toMatch(/; Secure/); // http://127.0.0.1: Secure only when PUBLIC_URL is https
    const maxAge = Number(/; Max-Age=(\d+)/.exec(session!)?.[1]);
    // Bounded by the access token's lifetime (the development server's: one hour).
    expect(maxAge).toBeGreaterThan(3500);
    expect(maxAge).toBeLessThanOrEqual(3600);
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

  const probe = (headers: Record<string, string>) =>
    fetch(`${baseUrl}/admin/v1/tenants/demo/probe`, {
      method: 'POST',
      headers: { cookie: cookieHeader(jar), ...headers },
    });

  it('refuses a state-changing request without the CSRF token (403 problem), and changes nothing', async () => {
    const before = writes.entries.length;
    const attempts: Array<Record<string, string>> = [
      { origin: baseUrl },
      { origin: baseUrl, 'x-csrf-token': 'A'.repeat(43) },
      { 'x-csrf-token': csrfToken },
      { origin: baseUrl, 'x-csrf-token': csrfToken, 'sec-fetch-site': 'cross-site' },
    ];
    for (const headers of attempts) {
      const response = await probe(headers);
      expect(response.status).toBe(403);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const problem = (await response.json()) as Record<string, unknown>;
      expect(problem).toMatchObject({ type: 'urn:mcpgw:problem:csrf-refused', status: 403, code: 'csrf-refused' });
      expect(problem.detail).toEqual(expect.any(String));
    }
    expect(writes.entries.length).toBe(before);
  });

  it('admits it with the token and the gateway Origin', async () => {
    const response = await probe({ origin: baseUrl, 'x-csrf-token': csrfToken, 'sec-fetch-site': 'same-origin' });
    expect(response.status).toBe(204);
    expect(writes.entries.at(-1)).toEqual({
      tenantId: 'demo',
      principal: expect.objectContaining({ kind: 'tenant-admin', subject: 'demo-user', via: 'session' }),
    });
  });

  it('needs no CSRF token from a bearer-token caller', async () => {
    // What `npm run token -- --tenant demo --admin` prints.
    const { token, resource, scope } = await mintTenantToken(built.config, { tenant: 'demo', admin: true });
    expect(resource).toBe(tenantAdminResource(baseUrl, 'demo'));
    expect(scope).toBe(ADMIN_SCOPE);
    const response = await fetch(`${baseUrl}/admin/v1/tenants/demo/probe`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, cookie: cookieHeader(jar) },
    });
    expect(response.status).toBe(204);
    expect(writes.entries.at(-1)?.principal.via).toBe('bearer');
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
    expect(cleared).toMatch(/; Path=\/admin\/v1\/tenants\/demo(;|$)/);
  });
});

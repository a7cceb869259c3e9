/**
 * Admin sign-in behind https (docs/admin-sign-in.md): with an https
 * PUBLIC_URL every cookie is `Secure`, the session cookie carries the
 * `__Secure-` prefix (RFC 6265bis section 4.1.3.1), and the CSRF check wants
 * the public origin. The gateway is reached over plain http, as behind a
 * TLS-terminating proxy; the identity provider is a local oidc-provider. The
 * admin API is the real one, over a control plane (PGlite).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@mcpgw/test-helpers/free-port';
import type { TestApp } from '@mcpgw/test-helpers/gateway';
import { buildTestApp } from '@mcpgw/test-helpers/gateway';
import type { Jar } from './admin-sign-in-harness.js';
import {
  ADMIN_BINDING,
  ADMIN_SCOPE,
  SECRET,
  SILENT,
  cookieHeader,
  putGrant,
  signInThroughBrowser,
  startSecondIssuer,
  stateOf,
} from './admin-sign-in-harness.js';

let built: TestApp;
let idp: Awaited<ReturnType<typeof startSecondIssuer>>;
let keysDir: string;
let port: number;
const publicUrl = () => `https://localhost:${port}`;

beforeAll(async () => {
  const idpPort = await freePort();
  port = await freePort();
  const issuer = `http://127.0.0.1:${idpPort}/idp`;
  keysDir = await mkdtemp(join(tmpdir(), 'https-idp-'));
  idp = await startSecondIssuer(idpPort, {
    keystorePath: join(keysDir, 'keys.json'),
    adminResources: [`${publicUrl()}/admin/v1/tenants/globex`],
    clients: [{ clientId: 'globex-admin', redirectUris: [`${publicUrl()}/admin/v1/tenants/globex/callback`] }],
    logger: SILENT,
  });
  built = await buildTestApp({
    bootstrap: {
      configDir: keysDir,
      document: {
        tenants: [
          {
            id: 'globex',
            auth: { issuers: [{ issuer, discovery: true }] },
            grants: [{ name: 'all', match: {}, allow: [{ source: 'notes' }] }],
            sources: [{ id: 'notes', type: 'static', resources: [{ uri: 'note://one', name: 'one', text: 'one' }] }],
            adminSignIn: { clientId: 'globex-admin', scopes: ['openid', ADMIN_SCOPE] },
            adminRoleBindings: [ADMIN_BINDING],
          },
        ],
      },
    },
    env: { HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL: publicUrl(), SECRETS_KEY: SECRET },
    admin: {},
  });
  await built.app.listen({ host: '127.0.0.1', port });
});
afterAll(async () => {
  await built?.close();
  await idp?.close();
  await rm(keysDir, { recursive: true, force: true });
});

describe('admin sign-in behind https (PUBLIC_URL https)', () => {
  it('marks every cookie Secure, names every cookie __Secure-, and checks Origin against PUBLIC_URL', async () => {
    const jar: Jar = new Map();
    const direct = `http://localhost:${port}`;
    const { loginCookies, callback, callbackCookies } = await signInThroughBrowser(
      direct,
      'globex',
      jar,
      (url) => url,
      publicUrl(),
    );
    expect(loginCookies).toHaveLength(2);
    // The flow's state and PKCE verifier cookies: Secure, and named so a browser refuses them from plain http
    // (RFC 6265bis section 4.1.3.1); their Path is the tenant's, which `__Host-` would forbid.
    expect(loginCookies.map((cookie) => cookie.split('=')[0]).sort()).toEqual([
      '__Secure-mcpgw-admin-oauth-state',
      '__Secure-mcpgw-admin-oauth-verifier',
    ]);
    for (const cookie of loginCookies) {
      expect(cookie).toMatch(/; Secure/);
      expect(cookie).toMatch(/; HttpOnly/);
      expect(cookie).toMatch(/; Path=\/admin\/v1\/tenants\/globex(;|$)/);
    }
    expect(callback.status).toBe(303);
    // Every cookie the callback sets (the session, and the flow cookies it clears) carries a prefix.
    for (const cookie of callbackCookies) expect(cookie).toMatch(/^__(Secure|Host)-/);
    const session = callbackCookies.find((cookie) => cookie.startsWith('__Secure-mcpgw-admin-session='));
    expect(session).toMatch(/; Secure/);
    expect(session).toMatch(/; HttpOnly/);
    expect(session).toMatch(/; SameSite=Lax/);
    // The console's pages under /admin/tenants/globex/ need it too; the tenant is sealed inside.
    expect(session).toMatch(/; Path=\/admin(;|$)/);
    const response = await fetch(`${direct}/admin/v1/tenants/globex/session`, {
      headers: { cookie: cookieHeader(jar) },
    });
    expect(response.status).toBe(200);
    const { csrfToken } = (await response.json()) as { csrfToken: string };
    const write = (origin: string) =>
      putGrant(direct, 'globex', 'more-readers', { cookie: cookieHeader(jar), origin, 'x-csrf-token': csrfToken });
    const before = await stateOf(built.app, 'globex');
    expect((await write(direct)).status).toBe(403);
    expect(await stateOf(built.app, 'globex')).toBe(before);
    expect((await write(publicUrl())).status).toBe(201);
    expect(await built.app.controlPlane!.store.getEntity('globex', 'grant', 'more-readers')).toBeDefined();
  });
});

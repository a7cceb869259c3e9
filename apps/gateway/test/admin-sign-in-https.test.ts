/**
 * Admin sign-in behind https (docs/admin-sign-in.md): with an https
 * PUBLIC_URL every cookie is `Secure`, the session cookie carries the
 * `__Secure-` prefix (RFC 6265bis section 4.1.3.1), and the CSRF check wants
 * the public origin. The gateway is reached over plain http, as behind a
 * TLS-terminating proxy; the identity provider is a local oidc-provider.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '@mcpgw/core';
import { freePort } from '@mcpgw/test-helpers/free-port';
import type { TestApp } from '@mcpgw/test-helpers/gateway';
import { buildTestApp } from '@mcpgw/test-helpers/gateway';
import type { Jar } from './admin-sign-in-harness.js';
import {
  ADMIN_SCOPE,
  SECRET,
  cookieHeader,
  scopeResolver,
  tenantAdminResource,
  signInThroughBrowser,
  startSecondIssuer,
  wireSignIn,
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
  const silent = { child: () => silent, debug() {}, info() {}, warn() {}, error() {} } as unknown as Logger;
  idp = await startSecondIssuer(idpPort, {
    keystorePath: join(keysDir, 'keys.json'),
    adminResources: [tenantAdminResource(publicUrl(), 'globex')],
    clients: [{ clientId: 'globex-admin', redirectUris: [`${publicUrl()}/admin/v1/tenants/globex/callback`] }],
    logger: silent,
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
          },
        ],
      },
    },
    env: { HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL: publicUrl(), SECRETS_KEY: SECRET },
  });
  await wireSignIn(built, publicUrl(), scopeResolver(issuer, [tenantAdminResource(publicUrl(), 'globex')], silent));
  await built.app.listen({ host: '127.0.0.1', port });
});
afterAll(async () => {
  await built?.close();
  await idp?.close();
  await rm(keysDir, { recursive: true, force: true });
});

describe('admin sign-in behind https (PUBLIC_URL https)', () => {
  it('marks every cookie Secure, names the session cookie __Secure-, and checks Origin against PUBLIC_URL', async () => {
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
    for (const cookie of loginCookies) expect(cookie).toMatch(/; Secure/);
    expect(callback.status).toBe(303);
    const session = callbackCookies.find((cookie) => cookie.startsWith('__Secure-mcpgw-admin-session='));
    expect(session).toMatch(/; Secure/);
    expect(session).toMatch(/; HttpOnly/);
    expect(session).toMatch(/; SameSite=Lax/);
    expect(session).toMatch(/; Path=\/admin\/v1\/tenants\/globex(;|$)/);
    const response = await fetch(`${direct}/admin/v1/tenants/globex/session`, {
      headers: { cookie: cookieHeader(jar) },
    });
    expect(response.status).toBe(200);
    const { csrfToken } = (await response.json()) as { csrfToken: string };
    const write = (origin: string) =>
      fetch(`${direct}/admin/v1/tenants/globex/probe`, {
        method: 'POST',
        headers: { cookie: cookieHeader(jar), origin, 'x-csrf-token': csrfToken },
      });
    expect((await write(direct)).status).toBe(403);
    expect((await write(publicUrl())).status).toBe(204);
  });
});

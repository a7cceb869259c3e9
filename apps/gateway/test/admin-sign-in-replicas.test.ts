/**
 * Replicas share no memory (docs/admin-sign-in.md): the sign-in starts on one
 * replica, the identity provider sends the browser back to another, and a
 * third request lands on the first again. The flow's state lives in the
 * browser's cookies and the session is sealed with SECRETS_KEY, so each step
 * works wherever it lands. Two apps, one configuration, one PUBLIC_URL, as
 * behind a load balancer; the identity provider is a local oidc-provider.
 * Also here: a person the identity provider signs in who is not an admin.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '@mcpgw/core';
import { freePort } from '@mcpgw/test-helpers/free-port';
import type { TestApp } from '@mcpgw/test-helpers/gateway';
import { buildTestApp } from '@mcpgw/test-helpers/gateway';
import type { Jar, Writes } from './admin-sign-in-harness.js';
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

const replicas: Array<{ built: TestApp; url: string; writes: Writes }> = [];
let idp: Awaited<ReturnType<typeof startSecondIssuer>>;
let keysDir: string;
let publicUrl: string;

beforeAll(async () => {
  const [idpPort, first, second] = [await freePort(), await freePort(), await freePort()];
  publicUrl = `http://127.0.0.1:${first}`;
  const issuer = `http://127.0.0.1:${idpPort}/idp`;
  keysDir = await mkdtemp(join(tmpdir(), 'replicas-idp-'));
  const adminResources = ['acme', 'umbrella'].map((id) => tenantAdminResource(publicUrl, id));
  const silent = { child: () => silent, debug() {}, info() {}, warn() {}, error() {} } as unknown as Logger;
  idp = await startSecondIssuer(idpPort, {
    keystorePath: join(keysDir, 'keys.json'),
    adminResources,
    clients: [
      { clientId: 'acme-admin', redirectUris: [`${publicUrl}/admin/v1/tenants/acme/callback`] },
      { clientId: 'umbrella-admin', redirectUris: [`${publicUrl}/admin/v1/tenants/umbrella/callback`] },
    ],
    logger: silent,
  });
  const tenant = (id: string, scopes: string[]) => ({
    id,
    auth: { issuers: [{ issuer, discovery: true }] },
    grants: [{ name: 'all', match: {}, allow: [{ source: 'notes' }] }],
    sources: [{ id: 'notes', type: 'static', resources: [{ uri: 'note://one', name: 'one', text: 'one' }] }],
    adminSignIn: { clientId: `${id}-admin`, scopes },
  });
  // umbrella's sign-in does not ask for the admin scope: its people sign in, but not as admins.
  const document = { tenants: [tenant('acme', ['openid', ADMIN_SCOPE]), tenant('umbrella', ['openid'])] };
  for (const port of [first, second]) {
    const built = await buildTestApp({
      bootstrap: { configDir: keysDir, document },
      env: { HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL: publicUrl, SECRETS_KEY: SECRET },
    });
    const { writes } = await wireSignIn(built, publicUrl, scopeResolver(issuer, adminResources, silent));
    await built.app.listen({ host: '127.0.0.1', port });
    replicas.push({ built, url: `http://127.0.0.1:${port}`, writes });
  }
});
afterAll(async () => {
  for (const replica of replicas) await replica.built.close();
  await idp?.close();
  await rm(keysDir, { recursive: true, force: true });
});

describe('admin sign-in across replicas', () => {
  it('starts on one replica, finishes on the other, and the session works on both', async () => {
    const [a, b] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
    const jar: Jar = new Map();
    // Login on B; the identity provider returns the browser to PUBLIC_URL, which the "load balancer" sends to A.
    const { callback } = await signInThroughBrowser(
      b.url,
      'acme',
      jar,
      (url) => new URL(`${url.pathname}${url.search}`, a.url),
      publicUrl,
    );
    expect(callback.status).toBe(303);
    for (const replica of [a, b]) {
      const response = await fetch(`${replica.url}/admin/v1/tenants/acme/session`, {
        headers: { cookie: cookieHeader(jar) },
      });
      expect(response.status).toBe(200);
      const { csrfToken, principal } = (await response.json()) as { csrfToken: string; principal: unknown };
      expect(principal).toMatchObject({ kind: 'tenant-admin', tenantId: 'acme', via: 'session' });
      const write = await fetch(`${replica.url}/admin/v1/tenants/acme/probe`, {
        method: 'POST',
        headers: { cookie: cookieHeader(jar), origin: publicUrl, 'x-csrf-token': csrfToken },
      });
      expect(write.status).toBe(204);
      expect(replica.writes.entries).toHaveLength(1);
    }
  });
});

describe('a person who signs in but is not an admin', () => {
  it('gets 403 not-an-admin and no session cookie', async () => {
    const jar: Jar = new Map();
    const { callback, callbackCookies } = await signInThroughBrowser(replicas[0]!.url, 'umbrella', jar);
    expect(callback.status).toBe(403);
    expect(await callback.json()).toMatchObject({ code: 'not-an-admin', status: 403 });
    expect(callbackCookies.some((cookie) => cookie.startsWith('mcpgw-admin-session='))).toBe(false);
    const session = await fetch(`${replicas[0]!.url}/admin/v1/tenants/umbrella/session`, {
      headers: { cookie: cookieHeader(jar) },
    });
    expect(session.status).toBe(401);
  });
});

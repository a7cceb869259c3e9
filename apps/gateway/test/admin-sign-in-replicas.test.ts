/**
 * Replicas share no memory (docs/admin-sign-in.md): the sign-in starts on one
 * replica, the identity provider sends the browser back to another, and a
 * third request lands on the first again. The flow's state lives in the
 * browser's cookies and the session is sealed with SECRETS_KEY, so each step
 * works wherever it lands. Two apps, one configuration, one PUBLIC_URL, as
 * behind a load balancer; the identity provider is a local oidc-provider.
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
  const silent = { child: () => silent, debug() {}, info() {}, warn() {}, error() {} } as unknown as Logger;
  idp = await startSecondIssuer(idpPort, {
    keystorePath: join(keysDir, 'keys.json'),
    adminResources: [`${publicUrl}/admin/v1`],
    clients: [{ clientId: 'acme-admin', redirectUris: [`${publicUrl}/admin/v1/tenants/acme/callback`] }],
    logger: silent,
  });
  const document = {
    tenants: [
      {
        id: 'acme',
        auth: { issuers: [{ issuer, discovery: true }] },
        grants: [{ name: 'all', match: {}, allow: [{ source: 'notes' }] }],
        sources: [{ id: 'notes', type: 'static', resources: [{ uri: 'note://one', name: 'one', text: 'one' }] }],
        adminSignIn: { clientId: 'acme-admin', scopes: ['openid', ADMIN_SCOPE] },
      },
    ],
  };
  for (const port of [first, second]) {
    const built = await buildTestApp({
      bootstrap: { configDir: keysDir, document },
      env: { HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL: publicUrl, SECRETS_KEY: SECRET },
    });
    const { writes } = await wireSignIn(built, publicUrl, scopeResolver(issuer, `${publicUrl}/admin/v1`, silent));
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

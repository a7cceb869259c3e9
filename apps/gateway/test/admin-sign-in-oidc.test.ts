/**
 * Admin browser sign-in against a second, independent OpenID Connect issuer
 * (oidc-provider on its own port, trusted as a real issuer through discovery,
 * a confidential client whose secret comes from `{ "$env": ... }`), and the
 * refusals (docs/admin-sign-in.md): a cookie replayed on another tenant is a
 * 404 exactly like a missing tenant, an expired or tampered cookie is a 401,
 * a wrong `state` never yields a session, a tenant without sign-in has no
 * login URL. The gateway is the real one: buildApp's admin API over a
 * control plane (PGlite), whose token check (the tenant's admin resource as
 * audience, the tenant's admin role bindings) and 404s the sign-in shares,
 * and whose grants and audit log show that a refused write changed nothing.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintAccessToken } from '@mcpgw/authorization-server';
import { createSecretBox } from '@mcpgw/control-plane';
import { createServerKeys } from '@mcpgw/core';
import { freePort } from '@mcpgw/test-helpers/free-port';
import type { TestApp } from '@mcpgw/test-helpers/gateway';
import { buildTestApp } from '@mcpgw/test-helpers/gateway';
import { problemBody, tenantNotFound } from '@mcpgw/admin';
import { createSessionSealer } from '@mcpgw/admin';
import type { Jar } from './admin-sign-in-harness.js';
import {
  ADMIN_BINDING,
  ADMIN_SCOPE,
  SECRET,
  SILENT,
  cookieHeader,
  putGrant,
  recordLines,
  signInThroughBrowser,
  startSecondIssuer,
  stateOf,
} from './admin-sign-in-harness.js';

const CLIENT_SECRET = 'acme-admin-client-secret-from-the-environment';
/** What the gateway sends for hooli, which its identity provider does not accept. */
const WRONG_SECRET = 'hooli-admin-secret-the-identity-provider-refuses';
let built: TestApp;
/** The gateway's log lines, scanned for credentials at the end. */
const logs: string[] = [];
let idp: Awaited<ReturnType<typeof startSecondIssuer>>;
let keysDir: string;
let baseUrl: string;

beforeAll(async () => {
  const [port, idpPort] = [await freePort(), await freePort()];
  baseUrl = `http://127.0.0.1:${port}`;
  const issuer = `http://127.0.0.1:${idpPort}/idp`;
  const callback = (tenant: string) => `${baseUrl}/admin/v1/tenants/${tenant}/callback`;
  keysDir = await mkdtemp(join(tmpdir(), 'second-idp-'));
  idp = await startSecondIssuer(idpPort, {
    keystorePath: join(keysDir, 'keys.json'),
    // Each tenant's admin resource: the audience the admin API wants of that tenant's admins.
    adminResources: ['acme', 'globex', 'hooli'].map((tenant) => `${baseUrl}/admin/v1/tenants/${tenant}`),
    clients: [
      { clientId: 'acme-admin', clientSecret: CLIENT_SECRET, redirectUris: [callback('acme')] },
      { clientId: 'globex-admin', redirectUris: [callback('globex')] },
      {
        clientId: 'hooli-admin',
        clientSecret: 'the-secret-the-identity-provider-expects',
        redirectUris: [callback('hooli')],
      },
    ],
    logger: SILENT,
  });
  const tenant = (id: string, adminSignIn?: object) => ({
    id,
    auth: { issuers: [{ issuer, discovery: true }] },
    grants: [{ name: 'all', match: {}, allow: [{ source: 'notes' }] }],
    sources: [{ id: 'notes', type: 'static', resources: [{ uri: 'note://one', name: 'one', text: 'one' }] }],
    adminRoleBindings: [ADMIN_BINDING],
    ...(adminSignIn === undefined ? {} : { adminSignIn }),
  });
  built = await buildTestApp({
    bootstrap: {
      configDir: keysDir,
      document: {
        tenants: [
          tenant('acme', {
            clientId: 'acme-admin',
            clientSecret: { $env: 'ACME_ADMIN_SECRET' },
            scopes: ['openid', ADMIN_SCOPE],
          }),
          tenant('globex', { clientId: 'globex-admin', scopes: ['openid', ADMIN_SCOPE] }),
          tenant('hooli', {
            clientId: 'hooli-admin',
            clientSecret: { $env: 'HOOLI_ADMIN_SECRET' },
            scopes: ['openid', ADMIN_SCOPE],
          }),
          tenant('initech'),
        ],
      },
    },
    env: {
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'debug',
      SECRETS_KEY: SECRET,
      ACME_ADMIN_SECRET: CLIENT_SECRET,
      HOOLI_ADMIN_SECRET: WRONG_SECRET,
    },
    admin: {},
    logStream: recordLines(logs),
  });
  await built.app.listen({ host: '127.0.0.1', port });
});
afterAll(async () => {
  await built?.close();
  await idp?.close();
  await rm(keysDir, { recursive: true, force: true });
});

const session = (tenant: string, cookie: string) =>
  fetch(`${baseUrl}/admin/v1/tenants/${tenant}/session`, { headers: { cookie } });

/** A real acme admin's bearer token from the issuer (what an API client of acme's admins holds). */
const acmeAdminToken = () =>
  mintAccessToken({
    issuer: idp.issuer,
    keystorePath: join(keysDir, 'keys.json'),
    resource: `${baseUrl}/admin/v1/tenants/acme`, // acme's admin resource: the audience the admin API wants
    scope: ADMIN_SCOPE,
  });

/** The admin API's own answer for a tenant that does not exist, as its bearer caller gets it. */
async function adminApiMissingTenant(): Promise<{ contentType: string | null; body: string }> {
  const missing = await putGrant(baseUrl, 'no-such-tenant', 'readers', {
    authorization: `Bearer ${await acmeAdminToken()}`,
  });
  expect(missing.status).toBe(404);
  return { contentType: missing.headers.get('content-type'), body: await missing.text() };
}

describe('admin sign-in through a second OpenID Connect issuer', () => {
  const acme: Jar = new Map();
  let csrfToken: string;

  it('signs an acme admin in (confidential client, discovery) and GET .../session names them', async () => {
    const { callback } = await signInThroughBrowser(baseUrl, 'acme', acme);
    expect(callback.status).toBe(303);
    const response = await session('acme', cookieHeader(acme));
    expect(response.status).toBe(200);
    const body = (await response.json()) as { principal: unknown; csrfToken: string };
    expect(body.principal).toEqual({
      kind: 'tenant-admin',
      tenantId: 'acme',
      issuer: idp.issuer,
      subject: 'demo-user',
      via: 'session',
    });
    csrfToken = body.csrfToken;
  });

  it('refuses the acme cookie on globex with the 404 of a missing tenant, and writes nothing there', async () => {
    // What the admin API answers for a tenant that does not exist (its bearer caller, another tenant's admin).
    const missing = await adminApiMissingTenant();
    expect(JSON.parse(missing.body)).toEqual(problemBody(tenantNotFound()));
    const crossTenant = await putGrant(baseUrl, 'globex', 'readers', {
      authorization: `Bearer ${await acmeAdminToken()}`,
    });

    const before = await stateOf(built.app, 'globex');
    const replays = [
      fetch(`${baseUrl}/admin/v1/tenants/globex/session`, { headers: { cookie: cookieHeader(acme) } }),
      putGrant(baseUrl, 'globex', 'readers', {
        cookie: cookieHeader(acme),
        origin: baseUrl,
        'x-csrf-token': csrfToken,
      }),
      fetch(`${baseUrl}/admin/v1/tenants/globex/cache/flush`, {
        method: 'POST',
        headers: { cookie: cookieHeader(acme), origin: baseUrl, 'x-csrf-token': csrfToken },
      }),
      fetch(`${baseUrl}/admin/v1/tenants/no-such-tenant/session`, { headers: { cookie: cookieHeader(acme) } }),
      crossTenant,
    ];
    for (const replayed of await Promise.all(replays)) {
      expect(replayed.status).toBe(404);
      expect(replayed.headers.get('content-type')).toBe(missing.contentType);
      expect(await replayed.text()).toBe(missing.body);
    }
    expect(await stateOf(built.app, 'globex')).toBe(before);
  });

  it('refuses an expired cookie and a tampered one (401), and changes nothing', async () => {
    const sealer = createSessionSealer(createServerKeys({ secretsKey: SECRET }).adminSession);
    // A session as the callback seals it: an admin of acme by the admin scope, signed in with `issuer`.
    const sealed = (issuer: string, expiresAt: number) =>
      sealer.seal({
        // Sealed here, never recorded by a sign-in: each is refused before its record would be looked up.
        id: 'never-recorded',
        tenantId: 'acme',
        principal: { kind: 'tenant-admin', tenantId: 'acme', issuer, subject: 'demo-user', via: 'session' },
        expiresAt,
        csrfToken,
        scopes: [ADMIN_SCOPE],
        groups: [],
      });
    const expired = sealed(idp.issuer, Date.now() - 1000);
    // A cookie of the earlier format, sealed under the same key and purpose, without the scopes and groups
    // a request is re-checked with: refused (sign in again), never trusted as it stands.
    const legacy = createSecretBox(createServerKeys({ secretsKey: SECRET }).adminSession).seal(
      JSON.stringify({ t: 'acme', i: idp.issuer, s: 'demo-user', x: Date.now() + 600_000, c: csrfToken }),
      'mcpgw admin session cookie',
    );
    // A live session a binding still admits, signed in with an issuer the tenant no longer trusts
    // (removed after sign-in): refused on its next request, as a bearer token of that issuer is.
    const formerIssuer = sealed('https://former-idp.example/', Date.now() + 600_000);
    const value = acme.get('mcpgw-admin-session')!;
    // One bit of the sealed body flipped (format.keyId.nonce.body).
    const parts = value.split('.');
    const body = Buffer.from(parts[3]!, 'base64url');
    body[5] = body[5]! ^ 1;
    const tampered = [...parts.slice(0, 3), body.toString('base64url')].join('.');
    const before = await stateOf(built.app, 'acme');
    for (const [cookie, detail] of [
      [expired, /expired/],
      [tampered, /not valid/],
      [legacy, /not valid/],
      [formerIssuer, /no longer trusts/],
    ] as const) {
      const response = await session('acme', `mcpgw-admin-session=${cookie}`);
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({
        code: 'session-invalid',
        status: 401,
        detail: expect.stringMatching(detail),
      });
      const write = await putGrant(baseUrl, 'acme', 'readers', {
        cookie: `mcpgw-admin-session=${cookie}`,
        origin: baseUrl,
        'x-csrf-token': csrfToken,
      });
      expect(write.status).toBe(401);
      expect(await write.json()).toMatchObject({ code: 'session-invalid', status: 401 });
    }
    expect(await stateOf(built.app, 'acme')).toBe(before);
  });

  it('refuses a callback whose state is not the one this browser was given, and sets no session', async () => {
    const jar: Jar = new Map();
    const { callback, callbackCookies } = await signInThroughBrowser(baseUrl, 'globex', jar, (url) => {
      url.searchParams.set('state', 'forged-state-value');
      return url;
    });
    expect(callback.status).toBe(400);
    expect(await callback.json()).toMatchObject({
      code: 'sign-in-failed',
      type: 'urn:mcpgw:admin:problem:sign-in-failed',
    });
    expect(callbackCookies.some((cookie) => cookie.startsWith('mcpgw-admin-session='))).toBe(false);
    expect(jar.has('mcpgw-admin-session')).toBe(false);
  });

  it('refuses a callback from a browser that never started the sign-in (no state cookie)', async () => {
    const jar: Jar = new Map();
    const { callback } = await signInThroughBrowser(baseUrl, 'globex', jar, (url) => {
      jar.clear();
      return url;
    });
    expect(callback.status).toBe(400);
    expect(jar.has('mcpgw-admin-session')).toBe(false);
  });

  it('signs a globex admin in (public client) with a session of its own tenant only', async () => {
    const globex: Jar = new Map();
    await signInThroughBrowser(baseUrl, 'globex', globex);
    expect(((await (await session('globex', cookieHeader(globex))).json()) as { tenantId: string }).tenantId).toBe(
      'globex',
    );
    expect((await session('acme', cookieHeader(globex))).status).toBe(404);
  });

  it('has no login for a tenant without sign-in settings: 404 as for a missing tenant', async () => {
    const missing = await fetch(`${baseUrl}/admin/v1/tenants/no-such-tenant/login`, { redirect: 'manual' });
    const without = await fetch(`${baseUrl}/admin/v1/tenants/initech/login`, { redirect: 'manual' });
    expect(missing.status).toBe(404);
    expect(without.status).toBe(404);
    const body = await missing.text();
    expect(await without.text()).toBe(body);
    // The admin API's bytes for a missing tenant: the sign-in reveals no more than the API does.
    expect(body).toBe((await adminApiMissingTenant()).body);
    // Nor does a HEAD start one (no cookies, no redirect).
    const head = await fetch(`${baseUrl}/admin/v1/tenants/acme/login`, { method: 'HEAD', redirect: 'manual' });
    expect(head.status).toBe(404);
    expect(head.headers.getSetCookie()).toEqual([]);
  });

  it('answers 401 with the login URL when GET .../session has no cookie', async () => {
    const response = await session('acme', '');
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({
      code: 'session-required',
      detail: expect.stringContaining('/admin/v1/tenants/acme/login'),
    });
  });

  it('refuses a code the token endpoint will not redeem (wrong client secret): 400, no session', async () => {
    const jar: Jar = new Map();
    const { callback } = await signInThroughBrowser(baseUrl, 'hooli', jar);
    expect(callback.status).toBe(400);
    expect(await callback.json()).toMatchObject({ code: 'sign-in-failed' });
    expect(jar.has('mcpgw-admin-session')).toBe(false);
  });

  it('logs no client secret, access token, authorization code or session cookie', async () => {
    const text = logs.join('');
    expect(text).toContain('admin signed in');
    expect(text).toContain('admin sign-in: state or code refused');
    for (const secret of [CLIENT_SECRET, WRONG_SECRET, acme.get('mcpgw-admin-session')!, csrfToken]) {
      expect(text).not.toContain(secret);
    }
    expect(text).not.toContain(Buffer.from(`hooli-admin:${WRONG_SECRET}`).toString('base64'));
    expect(text).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.eyJ/);
    expect(text).not.toMatch(/[?&]code=/);
  });
});

/**
 * Replicas share no memory (docs/admin-sign-in.md): the sign-in starts on one
 * replica, the identity provider sends the browser back to another, and a
 * third request lands on the first again. The flow's state lives in the
 * browser's cookies and the session is sealed with SECRETS_KEY, so each step
 * works wherever it lands. Two apps, one configuration, one PUBLIC_URL, one
 * control plane on the real Postgres, as behind a load balancer; the
 * identity provider is a local oidc-provider. Each replica's admin API takes
 * a write from the session, and both writes land in the one audit log.
 * Also here: a person the identity provider signs in who is not an admin,
 * and one who becomes an admin when the tenant's role bindings change in the
 * control plane (the sign-in asks the admin API's own check, bindings and all).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@mcpgw/test-helpers/free-port';
import type { TestApp } from '@mcpgw/test-helpers/gateway';
import { buildTestApp } from '@mcpgw/test-helpers/gateway';
import { type TestDatabase, createTestDatabase } from '@mcpgw/test-helpers/postgres';
import type { Jar } from './admin-sign-in-harness.js';
import {
  ADMIN_BINDING,
  ADMIN_SCOPE,
  SECRET,
  SILENT,
  auditOf,
  cookieHeader,
  putGrant,
  signInThroughBrowser,
  startSecondIssuer,
  stateOf,
} from './admin-sign-in-harness.js';
import { within } from '@mcpgw/test-helpers/within';

const replicas: Array<{ built: TestApp; url: string }> = [];
let database: TestDatabase;
let idp: Awaited<ReturnType<typeof startSecondIssuer>>;
let keysDir: string;
let publicUrl: string;

beforeAll(async () => {
  const [idpPort, first, second] = [await freePort(), await freePort(), await freePort()];
  database = await createTestDatabase('admin_sign_in_replicas');
  publicUrl = `http://127.0.0.1:${first}`;
  const issuer = `http://127.0.0.1:${idpPort}/idp`;
  keysDir = await mkdtemp(join(tmpdir(), 'replicas-idp-'));
  idp = await startSecondIssuer(idpPort, {
    keystorePath: join(keysDir, 'keys.json'),
    adminResources: ['acme', 'umbrella', 'initrode'].map((id) => `${publicUrl}/admin/v1/tenants/${id}`),
    clients: [
      { clientId: 'acme-admin', redirectUris: [`${publicUrl}/admin/v1/tenants/acme/callback`] },
      { clientId: 'umbrella-admin', redirectUris: [`${publicUrl}/admin/v1/tenants/umbrella/callback`] },
      { clientId: 'initrode-admin', redirectUris: [`${publicUrl}/admin/v1/tenants/initrode/callback`] },
    ],
    logger: SILENT,
  });
  const tenant = (id: string, scopes: string[], binding: object = ADMIN_BINDING) => ({
    id,
    auth: { issuers: [{ issuer, discovery: true }] },
    grants: [{ name: 'all', match: {}, allow: [{ source: 'notes' }] }],
    sources: [{ id: 'notes', type: 'static', resources: [{ uri: 'note://one', name: 'one', text: 'one' }] }],
    adminSignIn: { clientId: `${id}-admin`, scopes },
    adminRoleBindings: [binding],
  });
  // umbrella's sign-in does not ask for the admin scope: its people sign in, but not as admins.
  // initrode's people get the admin scope, but its only role binding wants a group the identity provider never sends.
  const groupOnly = { name: 'group-only', groups: ['gateway-admins'] };
  const document = {
    tenants: [
      tenant('acme', ['openid', ADMIN_SCOPE]),
      tenant('umbrella', ['openid']),
      tenant('initrode', ['openid', ADMIN_SCOPE], groupOnly),
    ],
  };
  for (const port of [first, second]) {
    const built = await buildTestApp({
      bootstrap: { configDir: keysDir, document },
      env: {
        HOST: '127.0.0.1',
        PORT: String(port),
        PUBLIC_URL: publicUrl,
        SECRETS_KEY: SECRET,
        DATABASE_URL: database.url,
      },
      admin: {},
    });
    await built.app.listen({ host: '127.0.0.1', port });
    replicas.push({ built, url: `http://127.0.0.1:${port}` });
  }
});
afterAll(async () => {
  for (const replica of replicas) await replica.built.close();
  await idp?.close();
  await database?.drop();
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
      const name = `by-${replica === a ? 'a' : 'b'}`;
      const write = await putGrant(replica.url, 'acme', name, {
        cookie: cookieHeader(jar),
        origin: publicUrl,
        'x-csrf-token': csrfToken,
      });
      expect(write.status).toBe(201);
    }
    // Both writes, one through each replica, in the one audit log, by the one signed-in admin.
    const events = (await auditOf(a.built.app, 'acme')).filter((event) => event.actor.kind !== 'bootstrap');
    expect(events.map((event) => [event.targetType, event.targetId, event.actor.kind, event.actor.subject])).toEqual([
      ['grant', 'by-b', 'tenant-admin', 'demo-user'],
      ['grant', 'by-a', 'tenant-admin', 'demo-user'],
    ]);
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

describe("a tenant's admin role bindings decide who signs in as an admin", () => {
  /** The cookie jar of the admin the new binding admitted, for the re-check that follows. */
  let signedIn: Jar | undefined;

  it('refuses a holder of the admin scope the bindings do not name, then admits them once a binding does', async () => {
    const [a, b] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
    const refused = await signInThroughBrowser(a.url, 'initrode', new Map());
    expect(refused.callback.status).toBe(403);
    expect(await refused.callback.json()).toMatchObject({ code: 'not-an-admin', status: 403 });
    expect(refused.callbackCookies.some((cookie) => cookie.startsWith('mcpgw-admin-session='))).toBe(false);

    // A binding for the scope's holders, committed to the shared control plane (as the bootstrap or an operator would).
    await a.built.app.controlPlane!.store.putEntity(
      { actor: { kind: 'operator', subject: 'test-operator' } },
      'initrode',
      'admin-role-binding',
      'scope-holders',
      { scopes: [ADMIN_SCOPE] },
    );
    const jar: Jar = new Map();
    const admitted = await signInThroughBrowser(
      b.url,
      'initrode',
      jar,
      (url) => new URL(`${url.pathname}${url.search}`, b.url),
      publicUrl,
    );
    expect(admitted.callback.status).toBe(303);
    const session = await fetch(`${b.url}/admin/v1/tenants/initrode/session`, {
      headers: { cookie: cookieHeader(jar) },
    });
    expect(session.status).toBe(200);
    expect(await session.json()).toMatchObject({ principal: { kind: 'tenant-admin', tenantId: 'initrode' } });
    signedIn = jar;
  });

  it('ends the session on its next request once the binding that admitted it is deleted, for good', async () => {
    const [a, b] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
    expect(signedIn).toBeDefined();
    const cookie = cookieHeader(signedIn!);
    const current = await fetch(`${b.url}/admin/v1/tenants/initrode/session`, { headers: { cookie } });
    expect(current.status).toBe(200);
    const { csrfToken } = (await current.json()) as { csrfToken: string };
    const read = () => fetch(`${b.url}/admin/v1/tenants/initrode/grants`, { headers: { cookie } });
    const write = (name: string) =>
      putGrant(b.url, 'initrode', name, { cookie, origin: publicUrl, 'x-csrf-token': csrfToken });
    expect((await read()).status).toBe(200);
    expect((await write('while-bound')).status).toBe(201);

    // The binding is deleted through replica A's control plane; the session, served by B, still holds its cookie.
    const operator = { actor: { kind: 'operator', subject: 'test-operator' } } as const;
    const store = a.built.app.controlPlane!.store;
    await store.deleteEntity(operator, 'initrode', 'admin-role-binding', 'scope-holders');
    const before = JSON.stringify({
      grants: await store.listEntities('initrode', 'grant'),
      audit: await auditOf(a.built.app, 'initrode'),
    });
    // The same refusal a bearer token of a person no binding names gets (docs/admin-api.md, "Problems").
    for (const response of [await read(), await write('after-unbinding')]) {
      expect(response.status).toBe(403);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await response.json()).toMatchObject({
        type: 'urn:mcpgw:admin:problem:forbidden',
        status: 403,
        detail: expect.stringMatching(/no longer holds any of the admin roles/),
      });
    }
    // Nor does the sign-in's own "who am I" still answer as an admin.
    const whoAmI = await fetch(`${b.url}/admin/v1/tenants/initrode/session`, { headers: { cookie } });
    expect(whoAmI.status).toBe(403);
    expect(await whoAmI.json()).toMatchObject({ type: 'urn:mcpgw:admin:problem:forbidden', status: 403 });
    expect(await store.getEntity('initrode', 'grant', 'after-unbinding')).toBeUndefined();
    expect(
      JSON.stringify({
        grants: await store.listEntities('initrode', 'grant'),
        audit: await auditOf(a.built.app, 'initrode'),
      }),
    ).toBe(before);

    // The binding's removal ended the session itself, not only its use: re-adding the binding does not
    // revive it (the person signs in again), on either replica.
    await store.putEntity(operator, 'initrode', 'admin-role-binding', 'scope-holders', { scopes: [ADMIN_SCOPE] });
    for (const url of [a.url, b.url]) {
      const response = await fetch(`${url}/admin/v1/tenants/initrode/grants`, { headers: { cookie } });
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ code: 'session-invalid', detail: expect.stringMatching(/ended/) });
    }
    expect((await write('rebound')).status).toBe(401);
    expect(await store.getEntity('initrode', 'grant', 'rebound')).toBeUndefined();
  });
});

describe('sessions end on the server', () => {
  /** Signs a browser in to acme through replica A: its cookie and CSRF token, or undefined when that fails. */
  async function trySignIn(): Promise<{ cookie: string; csrfToken: string } | undefined> {
    const jar: Jar = new Map();
    const { callback } = await signInThroughBrowser(replicas[0]!.url, 'acme', jar).catch(() => ({
      callback: undefined,
    }));
    if (callback?.status !== 303) return undefined;
    const cookie = cookieHeader(jar);
    const response = await fetch(`${replicas[0]!.url}/admin/v1/tenants/acme/session`, { headers: { cookie } });
    if (response.status !== 200) return undefined;
    const { csrfToken } = (await response.json()) as { csrfToken: string };
    return { cookie, csrfToken };
  }
  async function signIn(): Promise<{ cookie: string; csrfToken: string }> {
    const signedIn = await trySignIn();
    expect(signedIn).toBeDefined();
    return signedIn!;
  }

  it('refuses the cookie replayed after sign-out on any replica, and changes nothing', async () => {
    const [a, b] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
    const { cookie, csrfToken } = await signIn();
    const grants = (url: string) => fetch(`${url}/admin/v1/tenants/acme/grants`, { headers: { cookie } });
    expect((await grants(b.url)).status).toBe(200);
    const logout = await fetch(`${a.url}/admin/v1/tenants/acme/logout`, {
      method: 'POST',
      headers: { cookie, origin: publicUrl, 'x-csrf-token': csrfToken },
    });
    expect(logout.status).toBe(204);
    const before = await stateOf(a.built.app, 'acme');
    // The browser dropped the cookie; an attacker who copied it before replays it on the other replica.
    for (const url of [b.url, a.url]) {
      for (const response of [
        await grants(url),
        await fetch(`${url}/admin/v1/tenants/acme/session`, { headers: { cookie } }),
        await putGrant(url, 'acme', 'after-logout', { cookie, origin: publicUrl, 'x-csrf-token': csrfToken }),
      ]) {
        expect(response.status).toBe(401);
        expect(await response.json()).toMatchObject({
          type: 'urn:mcpgw:admin:problem:session-invalid',
          detail: expect.stringMatching(/ended/),
        });
      }
    }
    expect(await stateOf(a.built.app, 'acme')).toBe(before);
  });

  it("ends a tenant's sessions the moment it is suspended, and reactivating it does not revive them", async () => {
    const [a, b] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
    const { cookie } = await signIn();
    const grants = (url: string) => fetch(`${url}/admin/v1/tenants/acme/grants`, { headers: { cookie } });
    expect((await grants(b.url)).status).toBe(200);
    const operator = { actor: { kind: 'operator', subject: 'test-operator' } } as const;
    const store = a.built.app.controlPlane!.store;
    await store.updateTenant(operator, 'acme', { status: 'suspended' });
    // No waiting for replica B to notice the suspension: its very next request is refused (401 while it
    // still serves the tenant, 404 once it has stopped).
    expect([401, 404]).toContain((await grants(b.url)).status);
    await store.updateTenant(operator, 'acme', { status: 'active' });
    // A new sign-in works once the tenant is active and served again (a session can only be recorded then) ...
    let fresh: { cookie: string } | undefined;
    await within(10_000, async () => (fresh = await trySignIn()) !== undefined);
    for (const url of [a.url, b.url]) {
      await within(10_000, async () => {
        const response = await fetch(`${url}/admin/v1/tenants/acme/grants`, { headers: { cookie: fresh!.cookie } });
        return response.status === 200;
      });
      // ... while the one signed in before the suspension stays ended on both replicas.
      const response = await grants(url);
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ code: 'session-invalid' });
    }
  });
});

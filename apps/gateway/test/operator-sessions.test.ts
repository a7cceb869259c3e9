/**
 * Operators' browser sessions are recorded in the control plane (migration
 * 0008): the cookie carries only a sealed id, sign-out deletes the record, so
 * a copy of the cookie replayed afterwards opens nothing; and neither kind of
 * session cookie opens as the other. Over real HTTP, on both control-plane
 * engines (PGlite for `npm start`, a real Postgres database for production).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { followToRedirectUri } from '@mcpgw/test-helpers/follow-redirects';
import { freePort } from '@mcpgw/test-helpers/free-port';
import type { TestApp } from '@mcpgw/test-helpers/gateway';
import { buildTestApp } from '@mcpgw/test-helpers/gateway';
import { type TestDatabase, createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { demoBootstrap } from '../src/demo.js';
import type { Jar } from './admin-sign-in-harness.js';
import { SECRET, cookieHeader, store } from './admin-sign-in-harness.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

describe.each(['pglite', 'postgres'] as const)('operator sessions on %s', (engine) => {
  let built: TestApp;
  let baseUrl: string;
  let database: TestDatabase | undefined;

  beforeAll(async () => {
    const port = await freePort();
    if (engine === 'postgres') database = await createTestDatabase('operator_sessions');
    built = await buildTestApp({
      bootstrap: demoBootstrap(),
      env: {
        HOST: '127.0.0.1',
        PORT: String(port),
        SECRETS_KEY: SECRET,
        ...(database === undefined ? {} : { DATABASE_URL: database.url }),
      },
      admin: {},
    });
    baseUrl = `http://127.0.0.1:${port}`;
    await built.app.listen({ host: '127.0.0.1', port });
  });
  afterAll(async () => {
    await built?.close();
    await database?.drop();
  });

  async function get(cookie: string, path: string) {
    const response = await fetch(new URL(path, baseUrl), { redirect: 'manual', headers: { cookie } });
    return { status: response.status, html: await response.text(), location: response.headers.get('location') };
  }
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
  const hidden = (html: string, name: string): string | undefined =>
    [...html.matchAll(new RegExp(`name="${name}" value="([^"]*)"`, 'g'))].at(-1)?.[1];
  const rowCount = async () =>
    Number((await built.app.controlPlane.db.query('SELECT count(*) AS n FROM operator_sessions')).rows[0]!.n);

  async function signInAsOperator(jar: Jar): Promise<string> {
    const signedIn = await post(jar, '/admin/operator/sign-in', {});
    expect(signedIn.status).toBe(303);
    expect(signedIn.location).toBe('/admin/tenants');
    const value = jar.get('mcpgw-operator-session');
    expect(value).toBeDefined();
    return value!;
  }

  it('records the session, and a copied cookie replayed after sign-out is refused', async () => {
    const jar: Jar = new Map();
    const before = await rowCount();
    const sealed = await signInAsOperator(jar);
    expect(await rowCount()).toBe(before + 1);
    // Opaque: the cookie names neither the operator nor the issuer.
    expect(Buffer.from(sealed, 'base64url').toString('latin1')).not.toContain('local-operator');
    const copy = `mcpgw-operator-session=${sealed}`;
    const list = await get(copy, '/admin/tenants');
    expect(list.status).toBe(200);
    expect(list.html).toContain('href="/admin/tenants/demo/"');
    const csrf = hidden(list.html, 'csrf');
    expect(csrf).toBeDefined();

    // Sign-out without the form's CSRF token ends nothing.
    expect((await post(jar, '/admin/operator/sign-out', { csrf: 'wrong' })).status).toBe(403);
    expect((await get(copy, '/admin/tenants')).status).toBe(200);

    const out = await post(jar, '/admin/operator/sign-out', { csrf: csrf! });
    expect(out.status).toBe(303);
    expect(await rowCount()).toBe(before);
    // The copy still decrypts, but names a record that is gone: sent to sign in again.
    const replayed = await get(copy, '/admin/tenants');
    expect(replayed.status).not.toBe(200);
    expect(replayed.html).not.toContain('href="/admin/tenants/demo/"');
    expect(`${replayed.location ?? ''}${replayed.html}`).toContain('/admin/operator/sign-in');
  });

  it('never opens an operator cookie as a tenant admin session, nor the other way round', async () => {
    const operatorJar: Jar = new Map();
    const operatorSealed = await signInAsOperator(operatorJar);

    // A tenant admin's session of demo, through the gateway's own development sign-in.
    const adminJar: Jar = new Map();
    const start = await fetch(new URL('/admin/tenants/demo/sign-in', baseUrl), { redirect: 'manual' });
    expect(start.status).toBe(302);
    const login = await fetch(new URL(start.headers.get('location')!, baseUrl), { redirect: 'manual' });
    store(adminJar, login);
    const reached = await followToRedirectUri(
      new URL(login.headers.get('location')!),
      `${baseUrl}/admin/v1/tenants/demo/callback`,
    );
    const callback = await fetch(new URL(`${reached.pathname}${reached.search}`, baseUrl), {
      redirect: 'manual',
      headers: { cookie: cookieHeader(adminJar) },
    });
    store(adminJar, callback);
    expect(callback.status).toBe(303);
    const adminSealed = adminJar.get('mcpgw-admin-session');
    expect(adminSealed).toBeDefined();
    expect((await get(`mcpgw-admin-session=${adminSealed}`, '/admin/tenants/demo/')).status).toBe(200);

    // The tenant admin's cookie under the operator's name: not an operator.
    const asOperator = await get(`mcpgw-operator-session=${adminSealed}`, '/admin/tenants');
    expect(asOperator.status).not.toBe(200);
    expect(asOperator.html).not.toContain('href="/admin/tenants/demo/"');
    // The operator's cookie under the tenant admin's name: not a session of demo.
    expect((await get(`mcpgw-admin-session=${operatorSealed}`, '/admin/tenants/demo/')).status).toBe(401);
    expect((await get(`mcpgw-admin-session=${operatorSealed}`, '/admin/v1/tenants/demo/session')).status).toBe(401);
  });

  it('sweeps expired operator sessions at the next sign-in', async () => {
    await built.app.controlPlane.db.query(
      "INSERT INTO operator_sessions (id_hash, issuer, subject, expires_at) VALUES ('stale', 'x', 'y', now() - interval '1 minute')",
    );
    await signInAsOperator(new Map());
    const { rows } = await built.app.controlPlane.db.query("SELECT 1 FROM operator_sessions WHERE id_hash = 'stale'");
    expect(rows).toHaveLength(0);
  });
});

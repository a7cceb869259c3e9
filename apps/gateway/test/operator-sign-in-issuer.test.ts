/**
 * Operators of OPERATOR_ISSUER sign in to the admin console in the browser
 * (docs/admin-console.md, "Operators"): the authorization code grant with
 * PKCE (RFC 6749 section 4.1, RFC 7636 section 4) against a real, independent
 * OpenID Connect issuer (oidc-provider on its own port), the access token
 * verified by the admin API's own resolver, the session recorded in the
 * control plane as the local operator's is. Over real HTTP with a cookie jar:
 * the full flow lands on the tenant list; an account without the operator
 * role, or a tampered `state`, opens no session; OPERATOR_ISSUER without a
 * console client gives the settings to add.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { followToRedirectUri } from '@mcpgw/test-helpers/follow-redirects';
import { freePort } from '@mcpgw/test-helpers/free-port';
import type { TestApp } from '@mcpgw/test-helpers/gateway';
import { buildTestApp } from '@mcpgw/test-helpers/gateway';
import { startStandaloneIssuer } from '@mcpgw/test-helpers/standalone-issuer';
import { demoBootstrap } from '../src/demo.js';
import type { Jar } from './admin-sign-in-harness.js';
import { SECRET, SILENT, cookieHeader, store } from './admin-sign-in-harness.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const CLIENT_ID = 'gateway-operator-console';
const CLIENT_SECRET = 'the-operator-console-client-secret';

let keysDir: string;
let idp: Awaited<ReturnType<typeof startStandaloneIssuer>>;
/** The roles the issuer's one user has at the next sign-in. */
let roles: readonly string[] | undefined = ['gateway-operator'];

beforeAll(async () => {
  keysDir = await mkdtemp(join(tmpdir(), 'operator-idp-'));
});
afterAll(async () => {
  await idp?.close();
  await rm(keysDir, { recursive: true, force: true });
});

describe('operator sign-in at OPERATOR_ISSUER', () => {
  let built: TestApp;
  let baseUrl: string;

  beforeAll(async () => {
    const [port, idpPort] = [await freePort(), await freePort()];
    baseUrl = `http://127.0.0.1:${port}`;
    idp = await startStandaloneIssuer({
      port: idpPort,
      keystorePath: join(keysDir, 'keys.json'),
      // The admin API's operator audience (OPERATOR_AUDIENCE unset: `${PUBLIC_URL}/admin/v1`).
      resources: [`${baseUrl}/admin/v1`],
      scopes: ['mcpgw:operator'],
      clients: [
        { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUris: [`${baseUrl}/admin/operator/callback`] },
      ],
      logger: SILENT,
      roles: () => roles,
    });
    built = await buildTestApp({
      bootstrap: demoBootstrap(),
      env: {
        HOST: '127.0.0.1',
        PORT: String(port),
        PUBLIC_URL: baseUrl,
        SECRETS_KEY: SECRET,
        OPERATOR_ISSUER: idp.issuer,
        OPERATOR_CONSOLE_CLIENT_ID: CLIENT_ID,
        OPERATOR_CONSOLE_CLIENT_SECRET: CLIENT_SECRET,
        OPERATOR_CONSOLE_SCOPE: 'openid mcpgw:operator',
      },
      admin: {},
    });
    await built.app.listen({ host: '127.0.0.1', port });
  });
  afterAll(async () => {
    await built?.close();
  });

  const rowCount = async () =>
    Number((await built.app.controlPlane.db.query('SELECT count(*) AS n FROM operator_sessions')).rows[0]!.n);

  /** A browser's sign-in: the login route, the issuer's redirects (automatic consent), the callback, edited or not. */
  async function signIn(jar: Jar, edit: (callback: URL) => URL = (url) => url) {
    const login = await fetch(new URL('/admin/operator/login', baseUrl), { redirect: 'manual' });
    expect(login.status).toBe(302);
    store(jar, login);
    const authorize = new URL(login.headers.get('location')!);
    const reached = await followToRedirectUri(authorize, `${baseUrl}/admin/operator/callback`);
    const callback = await fetch(edit(new URL(`${reached.pathname}${reached.search}`, baseUrl)), {
      redirect: 'manual',
      headers: { cookie: cookieHeader(jar) },
    });
    store(jar, callback);
    return { authorize, callback, html: await callback.text() };
  }

  it('offers the sign-in at the issuer on the operator sign-in page', async () => {
    const page = await fetch(new URL('/admin/operator/sign-in', baseUrl));
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('href="/admin/operator/login"');
    expect(html).toContain(`Sign in with ${idp.issuer}`);
    expect(html).not.toContain('Continue as the local operator');
  });

  it('signs an operator in with PKCE S256 and lands on the tenant list', async () => {
    roles = ['gateway-operator'];
    const jar: Jar = new Map();
    const before = await rowCount();
    const { authorize, callback } = await signIn(jar);
    expect(authorize.origin + authorize.pathname).toBe(`${idp.issuer}/authorize`);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('state')).toBeTruthy();
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${baseUrl}/admin/operator/callback`);
    expect(authorize.searchParams.get('resource')).toBe(`${baseUrl}/admin/v1`);
    expect(callback.status).toBe(303);
    expect(callback.headers.get('location')).toBe('/admin/tenants');
    expect(await rowCount()).toBe(before + 1);
    const list = await fetch(new URL('/admin/tenants', baseUrl), { headers: { cookie: cookieHeader(jar) } });
    expect(list.status).toBe(200);
    expect(await list.text()).toContain('href="/admin/tenants/demo/"');
    const { rows } = await built.app.controlPlane.db.query(
      'SELECT issuer, subject FROM operator_sessions ORDER BY expires_at DESC LIMIT 1',
    );
    expect(rows[0]).toMatchObject({ issuer: idp.issuer, subject: 'demo-user' });
  });

  it('refuses an account without the operator role: a 403 page, no session', async () => {
    roles = ['viewer'];
    try {
      const jar: Jar = new Map();
      const before = await rowCount();
      const { callback, html } = await signIn(jar);
      expect(callback.status).toBe(403);
      expect(html).toContain('not an operator of this gateway');
      expect(jar.has('mcpgw-operator-session')).toBe(false);
      expect(await rowCount()).toBe(before);
      const list = await fetch(new URL('/admin/tenants', baseUrl), {
        redirect: 'manual',
        headers: { cookie: cookieHeader(jar) },
      });
      expect(list.status).not.toBe(200);
    } finally {
      roles = ['gateway-operator'];
    }
  });

  it('refuses a tampered state, and opens no session', async () => {
    const jar: Jar = new Map();
    const before = await rowCount();
    const { callback, html } = await signIn(jar, (url) => {
      url.searchParams.set('state', `${url.searchParams.get('state')}x`);
      return url;
    });
    expect(callback.status).toBe(400);
    expect(html).toContain('does not match the sign-in this browser started');
    expect(jar.has('mcpgw-operator-session')).toBe(false);
    expect(await rowCount()).toBe(before);
  });

  it('takes no return-to: the callback always lands on the tenant list', async () => {
    const login = await fetch(new URL('/admin/operator/login?return_to=https://evil.example/', baseUrl), {
      redirect: 'manual',
    });
    expect(login.status).toBe(302);
    expect(login.headers.get('location')).not.toContain('evil.example');
  });
});

describe('OPERATOR_ISSUER without a console client', () => {
  let built: TestApp;
  let baseUrl: string;

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    built = await buildTestApp({
      bootstrap: demoBootstrap(),
      env: {
        HOST: '127.0.0.1',
        PORT: String(port),
        PUBLIC_URL: baseUrl,
        SECRETS_KEY: SECRET,
        OPERATOR_ISSUER: 'https://operators.example.com/',
      },
      admin: {},
    });
    await built.app.listen({ host: '127.0.0.1', port });
  });
  afterAll(async () => {
    await built?.close();
  });

  it('names the settings to add, with no link to a login that cannot run', async () => {
    const page = await fetch(new URL('/admin/operator/sign-in', baseUrl));
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('OPERATOR_CONSOLE_CLIENT_ID');
    expect(html).toContain('/admin/operator/callback');
    expect(html).not.toContain('href="/admin/operator/login"');
    expect(html).not.toContain('Continue as the local operator');
    const login = await fetch(new URL('/admin/operator/login', baseUrl), { redirect: 'manual' });
    expect(login.status).toBe(404);
  });
});

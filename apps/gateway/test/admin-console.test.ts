/**
 * The admin console (docs/admin-console.md) over HTTP, as a browser without
 * pixels drives it: the demo admin signs in through the development
 * authorization server from the console's own link and lands on the tenant
 * overview; forms post with the session's CSRF token and the entity's version
 * and get exactly the admin API's answers (validation next to the field, 412
 * for a stale edit with what changed); a session of one tenant never reaches
 * another's pages. The gateway is the real one (buildApp over PGlite).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followToRedirectUri } from '@mcpgw/test-helpers/follow-redirects';
import type { TestApp } from '@mcpgw/test-helpers/gateway';
import { mintOperatorToken } from '../src/token-cli.js';
import type { Jar } from './admin-sign-in-harness.js';
import { startConsoleTestGateway, type ConsoleTestGateway } from './console-test-gateway.js';
import { auditOf, cookieHeader, store } from './admin-sign-in-harness.js';

let built: TestApp;
let baseUrl: string;

let gateway: ConsoleTestGateway;

beforeAll(async () => {
  gateway = await startConsoleTestGateway({ source: 'notes', uri: 'notes://a', name: 'a', text: 'secret of acme' });
  ({ built, baseUrl } = gateway);
});
afterAll(() => built?.close());

const page = (jar: Jar, path: string) => gateway.page(jar, path);

/** A form post as the browser sends it: urlencoded, with this origin. */
async function post(jar: Jar, path: string, fields: Record<string, string>, origin = baseUrl) {
  const response = await fetch(new URL(path, baseUrl), {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: cookieHeader(jar), origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  store(jar, response);
  return { status: response.status, html: await response.text(), location: response.headers.get('location') };
}

/** A hidden field's value; the last on the page is the edit form's (the list's row forms come first). */
const hidden = (html: string, name: string): string | undefined =>
  [...html.matchAll(new RegExp(`name="${name}" value="([^"]*)"`, 'g'))].at(-1)?.[1];

/** Signs in from the console's own link, following every redirect as a browser would. */
async function signIn(tenantId: string, jar: Jar): Promise<string> {
  const start = await page(jar, `/admin/tenants/${tenantId}/sign-in`);
  expect(start.status).toBe(302);
  const login = await page(jar, start.response.headers.get('location')!);
  expect(login.status).toBe(302);
  const reached = await followToRedirectUri(
    new URL(login.response.headers.get('location')!),
    `${baseUrl}/admin/v1/tenants/${tenantId}/callback`,
  );
  const callback = await page(jar, `${reached.pathname}${reached.search}`);
  expect(callback.status).toBe(303);
  return callback.response.headers.get('location')!;
}

describe('the admin console', () => {
  const jar: Jar = new Map();

  it('says what the server is at / and offers sign-in when signed out', async () => {
    const home = await page(new Map(), '/');
    expect(home.status).toBe(200);
    expect(home.response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(home.html).toContain('href="/admin/"');
    expect(home.html).toContain('href="/admin/v1/docs"');
    const signedOut = await page(new Map(), '/admin/tenants/demo/sources');
    expect(signedOut.status).toBe(401);
    expect(signedOut.html).toContain(
      `href="/admin/v1/tenants/demo/login?return_to=${encodeURIComponent('/admin/tenants/demo/sources')}"`,
    );
  });

  it('signs the demo admin in from its link and lands on the tenant overview', async () => {
    expect(await signIn('demo', jar)).toBe('/admin/tenants/demo/');
    const overview = await page(jar, '/admin/tenants/demo/');
    expect(overview.status).toBe(200);
    expect(overview.html).toContain('Signed in as');
    expect(overview.html).toMatch(/<th scope="row">handbook<\/th>\s*<td>\s*<span class="ok">healthy<\/span>/);
    // The JSON session route still answers API clients.
    expect((await page(jar, '/admin/v1/tenants/demo/session')).status).toBe(200);
  });

  it('never follows return_to off the tenant console (no open redirect)', async () => {
    for (const returnTo of [
      'https://evil.example/',
      '//evil.example/admin/tenants/demo/',
      '/admin/tenants/acme/',
      '/admin/tenants/demo/../../../x',
    ]) {
      const other: Jar = new Map();
      const login = await page(other, `/admin/v1/tenants/demo/login?return_to=${encodeURIComponent(returnTo)}`);
      expect(login.status).toBe(302);
      const reached = await followToRedirectUri(
        new URL(login.response.headers.get('location')!),
        `${baseUrl}/admin/v1/tenants/demo/callback`,
      );
      const callback = await page(other, `${reached.pathname}${reached.search}`);
      expect(callback.response.headers.get('location')).toBe('/admin/v1/tenants/demo/session');
    }
  });

  it('adds a grant through the form, shows the API refusal next to its field, and audits the change', async () => {
    const grants = await page(jar, '/admin/tenants/demo/grants');
    const csrf = hidden(grants.html, 'csrf')!;
    expect(csrf).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    const refused = await post(jar, '/admin/tenants/demo/grants', {
      csrf,
      name: 'readers',
      scopes: 'docs',
      allow: 'nosuch',
    });
    expect(refused.status).toBe(422);
    expect(refused.html).toMatch(/<p class="error" id="f-allow-error">\/allow\/0\/source: no source &#39;nosuch&#39;/);
    expect(refused.html).toContain('aria-invalid="true"');
    const saved = await post(jar, '/admin/tenants/demo/grants', {
      csrf,
      name: 'readers',
      scopes: 'docs',
      allow: 'handbook file:///handbook/nothing/**',
    });
    expect(saved.status).toBe(303);
    const after = await page(jar, saved.location!);
    expect(after.html).toContain('<th scope="row">readers</th>');
    // The pattern check of the preview, on the grants page.
    expect(after.html).toMatch(
      /readers<\/strong>\s*on\s*<code>handbook<\/code>[^]*?No resource the source currently lists matches/,
    );
    const audited = (await auditOf(built.app, 'demo')).find((event) => event.targetId === 'readers');
    expect(audited).toMatchObject({ action: 'create', targetType: 'grant', actor: { kind: 'tenant-admin' } });
    const audit = await page(jar, '/admin/tenants/demo/audit?targetType=grant');
    expect(audit.html).toContain('<code>readers</code>');
  });

  it('refuses a form without its CSRF token or from another origin, and changes nothing', async () => {
    const before = (await auditOf(built.app, 'demo')).length;
    const csrf = hidden((await page(jar, '/admin/tenants/demo/grants')).html, 'csrf')!;
    expect((await post(jar, '/admin/tenants/demo/grants', { name: 'x', allow: 'handbook' })).status).toBe(403);
    expect(
      (await post(jar, '/admin/tenants/demo/grants', { csrf, name: 'x', allow: 'handbook' }, 'https://evil.example'))
        .status,
    ).toBe(403);
    expect((await auditOf(built.app, 'demo')).length).toBe(before);
  });

  it('answers a stale edit with 412, what changed since, and a form that reapplies', async () => {
    const edit = await page(jar, '/admin/tenants/demo/grants?edit=readers');
    const csrf = hidden(edit.html, 'csrf')!;
    const version = hidden(edit.html, 'version')!;
    const base = hidden(edit.html, 'base')!.replace(/&quot;/g, '"');
    const first = await post(jar, '/admin/tenants/demo/grants', {
      csrf,
      name: 'readers',
      version,
      base,
      scopes: 'first',
      allow: 'handbook',
    });
    expect(first.status).toBe(303);
    const stale = await post(jar, '/admin/tenants/demo/grants', {
      csrf,
      name: 'readers',
      version,
      base,
      scopes: 'second',
      allow: 'handbook',
    });
    expect(stale.status).toBe(412);
    expect(stale.html).toContain('Someone changed this since you opened it');
    expect(stale.html).toMatch(
      /<code>\/match\/scopes\/0<\/code>\s*<\/td>\s*<td>\s*<del>&quot;docs&quot;<\/del>\s*<\/td>\s*<td>\s*<ins>&quot;first&quot;<\/ins>/,
    );
    const again = hidden(stale.html, 'version')!;
    expect(Number(again)).toBe(Number(version) + 1);
    const reapplied = await post(jar, '/admin/tenants/demo/grants', {
      csrf,
      name: 'readers',
      version: again,
      scopes: 'second',
      allow: 'handbook',
    });
    expect(reapplied.status).toBe(303);
    expect((await page(jar, '/admin/tenants/demo/grants')).html).toContain('second');
  });

  it('escapes what a tenant wrote', async () => {
    const csrf = hidden((await page(jar, '/admin/tenants/demo/grants')).html, 'csrf')!;
    const saved = await post(jar, '/admin/tenants/demo/grants', {
      csrf,
      name: '<script>x</script>',
      allow: 'handbook',
    });
    expect(saved.status).toBe(303);
    const listed = await page(jar, '/admin/tenants/demo/grants');
    expect(listed.html).not.toContain('<script>x</script>');
    expect(listed.html).toContain('&lt;script&gt;x&lt;/script&gt;');
  });

  it('previews a caller from claims', async () => {
    const csrf = hidden((await page(jar, '/admin/tenants/demo/preview')).html, 'csrf')!;
    const previewed = await post(jar, '/admin/tenants/demo/preview', {
      csrf,
      'a.claims': '{"sub": "alice", "scope": "mcp:read"}',
      'b.claims': '{"sub": "bob", "scope": "nothing"}',
    });
    expect(previewed.status).toBe(200);
    expect(previewed.html).toMatch(/Grants matched:\s*handbook-readers/);
    expect(previewed.html).toMatch(/<li class="only"><code>file:\/\/\/handbook\//);
  });

  it('shows which grants pasted claims match, and which condition fails for the others', async () => {
    const csrf = hidden((await page(jar, '/admin/tenants/demo/grants')).html, 'csrf')!;
    const row = (html: string, grant: string) =>
      html.match(new RegExp(`<th scope="row">${grant}</th>[^]*?</tr>`))?.[0] ?? '';

    const bob = await post(jar, '/admin/tenants/demo/grants/match', {
      csrf,
      'check.claims': '{"sub": "bob", "scope": "nothing"}',
    });
    expect(bob.status).toBe(200);
    expect(bob.html).toContain('<th scope="col">Pasted claims</th>');
    expect(bob.html).toMatch(
      /Caller <code>bob<\/code>[^]*?An MCP request would be refused \(403\)<\/strong>: missing scopes <code>mcp:read<\/code>/,
    );
    expect(bob.html.match(/Grants it matches:([^(]*)/)?.[1]).not.toContain('handbook-readers');
    expect(row(bob.html, 'handbook-readers')).toMatch(
      /does not match[^]*?<code>scopes<\/code> needs one of <code>mcp:read<\/code>; the caller's\s*scopes: <code>nothing<\/code>/,
    );
    // What was pasted stays in the form, to edit and check again.
    expect(bob.html).toContain('{&quot;sub&quot;: &quot;bob&quot;, &quot;scope&quot;: &quot;nothing&quot;}');

    const alice = await post(jar, '/admin/tenants/demo/grants/match', {
      csrf,
      'check.claims': '{"sub": "alice", "scope": "mcp:read"}',
    });
    expect(alice.status).toBe(200);
    expect(alice.html).toMatch(/Grants it matches:\s*handbook-readers/);
    expect(row(alice.html, 'handbook-readers')).toContain('<span class="ok">matches</span>');

    // Bad input: the reason next to the field, nothing checked, and a form without its CSRF token is refused.
    const notJson = await post(jar, '/admin/tenants/demo/grants/match', { csrf, 'check.claims': '{"sub": ' });
    expect(notJson.status).toBe(422);
    expect(notJson.html).toMatch(/id="f-check-claims-error">\/claims: must be a JSON object of claims/);
    expect(notJson.html).not.toContain('<th scope="col">Pasted claims</th>');
    const huge = await post(jar, '/admin/tenants/demo/grants/match', {
      csrf,
      'check.claims': JSON.stringify({ sub: 'x'.repeat(17 * 1024) }),
    });
    expect(huge.status).toBe(422);
    expect(huge.html).toMatch(/id="f-check-claims-error">\/claims: is over 16 KiB/);
    const notAnObject = await post(jar, '/admin/tenants/demo/grants/match', { csrf, 'check.claims': '["sub"]' });
    expect(notAnObject.status).toBe(422);
    expect(notAnObject.html).toContain('id="f-check-claims-error"');
    const forged = await post(jar, '/admin/tenants/demo/grants/match', { 'check.claims': '{"sub": "bob"}' });
    expect(forged.status).toBe(403);
  });

  it('keeps a session of one tenant out of every page of another, as if it did not exist', async () => {
    const existing = await page(jar, '/admin/tenants/acme/sources');
    const missing = await page(jar, '/admin/tenants/nosuch/sources');
    expect(existing.status).toBe(404);
    expect(existing.html).not.toContain('notes');
    expect(existing.html).toBe(missing.html);
    const csrf = hidden((await page(jar, '/admin/tenants/demo/')).html, 'csrf')!;
    const write = await post(jar, '/admin/tenants/acme/grants', { csrf, name: 'x', allow: 'notes' });
    expect(write.status).toBe(404);
  });

  it('shows operators every tenant and refuses the list to a tenant admin', async () => {
    const { token } = await mintOperatorToken(built.config, {});
    const response = await fetch(`${baseUrl}/admin/tenants`, { headers: { authorization: `Bearer ${token}` } });
    const html = await response.text();
    expect(response.status).toBe(200);
    expect(html).toContain('href="/admin/tenants/acme/"');
    expect(html).toContain('href="/admin/tenants/demo/"');
    const suspended = await fetch(`${baseUrl}/admin/tenants/acme/suspend`, {
      method: 'POST',
      redirect: 'manual',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    expect(suspended.status).toBe(303);
    expect((await built.app.controlPlane.store.getTenant('acme'))?.status).toBe('suspended');
    const csrf = hidden((await page(jar, '/admin/tenants/demo/')).html, 'csrf')!;
    expect((await post(jar, '/admin/tenants/demo/suspend', { csrf })).status).toBe(403);
  });

  it('signs out on the server', async () => {
    const csrf = hidden((await page(jar, '/admin/tenants/demo/')).html, 'csrf')!;
    const out = await post(jar, '/admin/tenants/demo/sign-out', { csrf });
    expect(out.status).toBe(303);
    expect((await page(jar, '/admin/tenants/demo/')).status).toBe(401);
  });
});

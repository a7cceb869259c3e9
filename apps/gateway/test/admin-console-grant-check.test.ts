/**
 * The grants form's check as it is typed (docs/admin-console.md), over HTTP
 * as the console's script sends it: the form's fields, urlencoded, with the
 * session's CSRF token. It answers what the save would refuse, word for word
 * and at the field and line the save shows it, and the patterns that match
 * nothing; it writes nothing (no grant, no audit entry, no revision); a
 * session of demo cannot check against acme; refusals of the request itself
 * are problem details. The console's one script is served same-origin under
 * the pages' `script-src 'self'`. The gateway is the real one (buildApp over PGlite).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followToRedirectUri } from '@mcpgw/test-helpers/follow-redirects';
import type { TestApp } from '@mcpgw/test-helpers/gateway';
import { mintOperatorToken } from '../src/token-cli.js';
import type { Jar } from './admin-sign-in-harness.js';
import { startConsoleTestGateway, type ConsoleTestGateway } from './console-test-gateway.js';
import { cookieHeader, stateOf, store } from './admin-sign-in-harness.js';

let built: TestApp;
let baseUrl: string;

let gateway: ConsoleTestGateway;

beforeAll(async () => {
  gateway = await startConsoleTestGateway({ source: 'vault', uri: 'vault://plans', name: 'plans', text: 'acme only' });
  ({ built, baseUrl } = gateway);
});
afterAll(() => built?.close());

const get = (jar: Jar, path: string) => gateway.page(jar, path);

/** A post as the browser sends it: urlencoded (or `body` as given), with this origin unless told. */
async function post(
  jar: Jar,
  path: string,
  fields: Record<string, string>,
  options: { origin?: string; body?: string; contentType?: string } = {},
) {
  const response = await fetch(new URL(path, baseUrl), {
    method: 'POST',
    redirect: 'manual',
    headers: {
      cookie: cookieHeader(jar),
      origin: options.origin ?? baseUrl,
      'content-type': options.contentType ?? 'application/x-www-form-urlencoded',
    },
    body: options.body ?? new URLSearchParams(fields).toString(),
  });
  store(jar, response);
  const text = await response.text();
  return { status: response.status, text, type: response.headers.get('content-type') ?? '', response };
}

const json = (text: string): Record<string, unknown> => JSON.parse(text) as Record<string, unknown>;

const hidden = (html: string, name: string): string | undefined =>
  [...html.matchAll(new RegExp(`name="${name}" value="([^"]*)"`, 'g'))].at(-1)?.[1];

/** What markup's escaping turned back into text. */
const unescaped = (html: string): string =>
  html
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

async function signIn(tenantId: string, jar: Jar): Promise<void> {
  const start = await get(jar, `/admin/tenants/${tenantId}/sign-in`);
  const login = await get(jar, start.response.headers.get('location')!);
  const reached = await followToRedirectUri(
    new URL(login.response.headers.get('location')!),
    `${baseUrl}/admin/v1/tenants/${tenantId}/callback`,
  );
  const callback = await get(jar, `${reached.pathname}${reached.search}`);
  expect(callback.status).toBe(303);
}

/** Everything a check must leave alone: demo's grants, its audit log and its revision. */
const demoState = async () =>
  JSON.stringify({
    state: await stateOf(built.app, 'demo'),
    tenant: await built.app.controlPlane!.store.getTenant('demo'),
  });

describe('the grant check route', () => {
  const jar: Jar = new Map();
  let csrf: string;
  const check = (fields: Record<string, string>, options?: Parameters<typeof post>[3]) =>
    post(jar, '/admin/tenants/demo/grants/check', { csrf, ...fields }, options);

  beforeAll(async () => {
    await signIn('demo', jar);
    const grants = await get(jar, '/admin/tenants/demo/grants?edit=handbook-readers');
    expect(grants.status).toBe(200);
    csrf = hidden(grants.html, 'csrf')!;
  });

  it('answers no problem and no warning for a pattern that matches what the source lists', async () => {
    const before = await demoState();
    const answer = await check({ name: 'handbook-readers', scopes: 'mcp:read', allow: 'handbook file:///handbook/**' });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.type).toMatch(/^application\/json/);
    expect(answer.response.headers.get('cache-control')).toBe('no-store');
    expect(json(answer.text)).toEqual({ problems: [], warnings: [] });
    expect(await demoState()).toBe(before);
  });

  it('refuses a pattern of another scheme with the very words the save refuses with, at its line', async () => {
    const before = await demoState();
    const allow = '\nhandbook file:///handbook/**\n\nhandbook https://example.com/**';
    const answer = await check({ name: 'handbook-readers', allow });
    expect(answer.status, answer.text).toBe(200);
    const { problems, warnings } = json(answer.text) as {
      problems: { field: string; line: number; where: string; message: string }[];
      warnings: unknown[];
    };
    expect(warnings).toEqual([]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ field: 'allow', line: 4, where: '/allow/1/uris/0' });
    expect(problems[0]!.message).toMatch(/^'https:\/\/example\.com\/\*\*' can never match: its scheme is 'https:'/);
    // The save of the same form refuses with exactly this, next to the same field.
    const saved = await post(jar, '/admin/tenants/demo/grants', {
      csrf,
      name: 'handbook-readers',
      version: hidden((await get(jar, '/admin/tenants/demo/grants?edit=handbook-readers')).html, 'version')!,
      allow,
    });
    expect(saved.status).toBe(422);
    const shown = /<p class="error" id="f-allow-error">([^<]*)<\/p>/.exec(saved.text)?.[1];
    expect(unescaped(shown ?? '')).toBe(`${problems[0]!.where}: ${problems[0]!.message}`);
    expect(await demoState()).toBe(before);
  });

  it('names a source the tenant lacks as the save does, for a grant not yet named', async () => {
    const before = await demoState();
    const answer = await check({ name: '', allow: 'handbook\nnosuch' });
    expect(answer.status, answer.text).toBe(200);
    expect(json(answer.text)).toEqual({
      problems: [
        {
          field: 'allow',
          line: 2,
          where: '/allow/1/source',
          message: "no source 'nosuch' in this tenant; sources: handbook",
        },
      ],
      warnings: [],
    });
    expect(await demoState()).toBe(before);
  });

  it('warns of a valid pattern that matches nothing the source lists, which the save allows', async () => {
    const before = await demoState();
    const answer = await check({ name: 'new-readers', allow: 'handbook file:///handbook/no-such-page-*' });
    expect(answer.status, answer.text).toBe(200);
    expect(json(answer.text)).toEqual({
      problems: [],
      warnings: [
        {
          field: 'allow',
          line: 1,
          kind: 'pattern-matches-nothing',
          message: "No resource the source currently lists matches 'file:///handbook/no-such-page-*'",
        },
      ],
    });
    expect(await demoState()).toBe(before);
    expect(await built.app.controlPlane!.store.getEntity('demo', 'grant', 'new-readers')).toBeUndefined();
  });

  it("refuses a check against another tenant's grants as if that tenant did not exist", async () => {
    const acmeBefore = JSON.stringify(await stateOf(built.app, 'acme'));
    const other = await post(jar, '/admin/tenants/acme/grants/check', { csrf, name: 'all', allow: 'vault nosuch' });
    const missing = await post(jar, '/admin/tenants/nosuch/grants/check', { csrf, name: 'all', allow: 'vault' });
    expect(other.status).toBe(404);
    expect(other.type).toMatch(/^application\/problem\+json/);
    expect(other.text).toBe(missing.text);
    expect(other.text).not.toContain('vault');
    expect(JSON.stringify(await stateOf(built.app, 'acme'))).toBe(acmeBefore);
  });

  it('refuses a check without the CSRF token, from another origin, or signed out', async () => {
    const noToken = await post(jar, '/admin/tenants/demo/grants/check', { allow: 'handbook' });
    expect(noToken.status).toBe(403);
    expect(noToken.type).toMatch(/^application\/problem\+json/);
    expect(json(noToken.text)).toMatchObject({ status: 403, type: 'urn:mcpgw:admin:problem:csrf-refused' });
    const wrongToken = await check({ csrf: 'not-the-token', allow: 'handbook' });
    expect(wrongToken.status).toBe(403);
    const elsewhere = await check({ allow: 'handbook' }, { origin: 'https://evil.example' });
    expect(elsewhere.status).toBe(403);
    const signedOut = await post(new Map(), '/admin/tenants/demo/grants/check', { csrf, allow: 'handbook' });
    expect(signedOut.status).toBe(401);
    expect(signedOut.type).toMatch(/^application\/problem\+json/);
  });

  it('answers malformed input with a 400 problem detail', async () => {
    const before = await demoState();
    const noAllow = await check({ name: 'x' });
    expect(noAllow.status).toBe(400);
    expect(json(noAllow.text)).toMatchObject({ status: 400, errors: [{ pointer: '/allow', detail: 'required' }] });
    const notText = await check(
      {},
      { contentType: 'application/json', body: JSON.stringify({ csrf, allow: ['handbook'] }) },
    );
    expect(notText.status).toBe(400);
    expect(json(notText.text)).toMatchObject({ status: 400, errors: [{ pointer: '/allow', detail: 'must be text' }] });
    const brokenJson = await check({}, { contentType: 'application/json', body: '{"allow": ' });
    expect(brokenJson.status).toBe(400);
    expect(brokenJson.type).toMatch(/^application\/problem\+json/);
    expect(await demoState()).toBe(before);
  });
});

describe('the checkGrant operation of the admin API', () => {
  it('refuses with the very body the PUT refuses with, and accepts without storing', async () => {
    const { token } = await mintOperatorToken(built.config, {});
    const call = (method: string, path: string, body: unknown) =>
      fetch(new URL(`/admin/v1/tenants/demo/grants/${path}`, baseUrl), {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const before = await demoState();
    const bad = { match: {}, allow: [{ source: 'handbook', uris: ['file://handbook/**'] }] };
    const put = await call('PUT', 'typo', bad);
    const checked = await call('POST', 'typo/check', bad);
    expect(put.status).toBe(422);
    expect(checked.status).toBe(422);
    expect(await checked.text()).toBe(await put.text());
    const good = await call('POST', 'typo/check', {
      match: {},
      allow: [{ source: 'handbook', uris: ['file:///handbook/**'] }],
    });
    expect(good.status).toBe(200);
    expect(await good.json()).toMatchObject({ name: 'typo', document: { allow: [{ source: 'handbook' }] } });
    expect(await built.app.controlPlane!.store.getEntity('demo', 'grant', 'typo')).toBeUndefined();
    expect(await demoState()).toBe(before);
  });
});

describe('the console script', () => {
  it('is served same-origin as JavaScript, kept for good at its versioned URL, and the only script a page may run', async () => {
    const jar: Jar = new Map();
    await signIn('demo', jar);
    const grants = await get(jar, '/admin/tenants/demo/grants');
    const policy = grants.response.headers.get('content-security-policy') ?? '';
    expect(policy.split('; ')).toContain("script-src 'self'");
    expect(policy).not.toMatch(/unsafe-eval|script-src[^;]*unsafe-inline/);
    const scripts = [...grants.html.matchAll(/<script\b[^>]*>([^]*?)<\/script>/g)];
    expect(scripts).toHaveLength(1);
    expect(scripts[0]![1]).toBe('');
    const src = /<script src="([^"]+)" defer>/.exec(grants.html)?.[1];
    expect(src).toMatch(/^\/admin\/console\.js\?v=[0-9a-f]{16}$/);
    // The live region sits next to "Sees", which names it, and says where to check.
    expect(grants.html).toMatch(
      /<textarea\s+id="f-allow"\s+name="allow"\s+aria-describedby="f-allow-hint f-allow-check"/,
    );
    expect(grants.html).toMatch(/id="f-allow-check"\s+class="check"\s+aria-live="polite"/);
    expect(grants.html).toContain('data-grant-check="/admin/tenants/demo/grants/check"');
    // Other pages load no script.
    expect((await get(jar, '/admin/tenants/demo/sources')).html).not.toContain('<script');

    const script = await get(new Map(), src!);
    expect(script.status).toBe(200);
    expect(script.response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(script.response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(script.html).toContain('data-grant-check');
    expect(script.html).not.toMatch(/\beval\(|new Function|innerHTML/);
    const unversioned = await get(new Map(), '/admin/console.js');
    expect(unversioned.response.headers.get('cache-control')).toBe('no-cache');
    const etag = unversioned.response.headers.get('etag')!;
    const again = await fetch(new URL('/admin/console.js', baseUrl), { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
  });
});

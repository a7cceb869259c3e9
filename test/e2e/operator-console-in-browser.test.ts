/**
 * Operators in the console, in a real browser (Debian's Chromium through
 * test/helpers/browser.ts): on a loopback gateway without OPERATOR_ISSUER the
 * operator follows `/admin/`'s link, continues as the local operator and
 * suspends and resumes a tenant through the tenant list; a tenant admin's
 * session is refused there; a cross-site sign-in is refused; axe passes.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoBootstrap } from '@mcpgw/gateway/testing';
import { expectAccessibleAtEveryWidth, launchChromium, newContext } from '@mcpgw/test-helpers/browser';
import { freePort } from '@mcpgw/test-helpers/free-port';
import type { TestApp } from '@mcpgw/test-helpers/gateway';
import { buildTestApp } from '@mcpgw/test-helpers/gateway';

const SLOW = { timeout: 90_000 };

let built: TestApp;
let base: string;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  const port = await freePort();
  const demo = demoBootstrap();
  const tenants = (demo.document as { tenants: Record<string, unknown>[] }).tenants;
  const acme = {
    id: 'acme',
    sources: [{ id: 'vault', type: 'static', resources: [{ uri: 'vault://plans', name: 'plans', text: 'x' }] }],
    grants: [{ name: 'all', match: {}, allow: [{ source: 'vault' }] }],
    auth: { issuers: [{ development: true }] },
  };
  built = await buildTestApp({
    bootstrap: { ...demo, document: { tenants: [...tenants, acme] } },
    env: { HOST: '127.0.0.1', PORT: String(port), SECRETS_KEY: 'an operator browser test key of 32+ characters' },
    admin: {},
  });
  base = `http://127.0.0.1:${port}`;
  await built.app.listen({ host: '127.0.0.1', port });
  browser = await launchChromium();
});
afterAll(async () => {
  for (const open of contexts) await open.close();
  await browser?.close();
  await built?.close();
});

async function freshPage(): Promise<Page> {
  const opened = await newContext(browser, { baseURL: base });
  contexts.push(opened);
  return opened.newPage();
}

const axe = expectAccessibleAtEveryWidth;

async function click(page: Page, name: string | RegExp): Promise<number | undefined> {
  const [response] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name }).click()]);
  return response?.status();
}

describe('operators in the console', () => {
  it('signs the local operator in from /admin/ and suspends and resumes a tenant', SLOW, async () => {
    const page = await freshPage();
    await page.goto('/admin/');
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'sign in as an operator' }).click()]);
    expect(page.url()).toBe(`${base}/admin/operator/sign-in`);
    await axe(page, 'operator-sign-in');
    expect(await click(page, 'Continue as the local operator')).toBe(200);
    expect(page.url()).toBe(`${base}/admin/tenants`);
    expect(await page.getByRole('banner').textContent()).toMatch(/Signed in as\s*local-operator\s*\(operator\)/);
    await axe(page, 'operator-tenants');

    const suspended = await click(page, /^Suspend demo$/);
    expect(suspended).toBe(200);
    expect(await page.getByRole('status').or(page.locator('.notice.good')).first().textContent()).toContain(
      'Suspended',
    );
    expect(await page.getByRole('row', { name: /^demo/ }).textContent()).toContain('suspended');
    expect(built.app.tenants.serving.has('demo')).toBe(false);
    expect(await click(page, /^Resume demo$/)).toBe(200);
    expect(await page.getByRole('row', { name: /^demo/ }).textContent()).toContain('active');

    // Signed out, the list asks for a sign-in again.
    expect(await click(page, 'Sign out')).toBe(200);
    expect((await page.goto('/admin/tenants'))?.status()).toBe(401);
  });

  it("refuses a tenant admin's session on the operators' pages", SLOW, async () => {
    const page = await freshPage();
    await page.goto('/admin/tenants/demo/sign-in');
    const landed = `${base}/admin/tenants/demo/`;
    for (let step = 0; step < 5 && page.url() !== landed; step++) {
      const button = page.getByRole('button', { name: /^(Continue as the demo user|Allow|Sign in)$/ });
      await Promise.race([page.waitForURL(landed), button.first().waitFor()]);
      if (page.url() === landed) break;
      await Promise.all([page.waitForNavigation(), button.first().click()]);
    }
    await page.waitForURL(landed);
    // The session is the tenant's alone: the operators' list does not know it (401), and a posted
    // suspension of another tenant is refused as for a tenant that does not exist.
    const response = await page.goto('/admin/tenants');
    expect(response?.status()).toBe(401);
    expect(await page.getByRole('main').textContent()).not.toContain('acme');
    const posted = await page.request.post('/admin/tenants/acme/suspend', { form: { version: '1' } });
    expect(posted.status()).toBeGreaterThanOrEqual(400);
    expect((await page.request.get('/admin/tenants/acme/')).status()).toBe(404);
  });

  it('refuses a sign-in posted from another site, and sets no cookie', async () => {
    const response = await fetch(`${base}/admin/operator/sign-in`, {
      method: 'POST',
      headers: { origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
      redirect: 'manual',
    });
    expect(response.status).toBe(403);
    expect(response.headers.get('set-cookie')).toBeNull();
  });
});

describe('operators behind a proxy', () => {
  it('offers no local operator sign-in and refuses one posted anyway', async () => {
    const app = await buildTestApp({
      bootstrap: demoBootstrap(),
      env: {
        HOST: '127.0.0.1',
        SECRETS_KEY: 'an operator browser test key of 32+ characters',
        TRUSTED_PROXIES: '127.0.0.1',
      },
      admin: {},
    });
    try {
      const page = await app.app.inject({ method: 'GET', url: '/admin/operator/sign-in' });
      expect(page.body).not.toContain('Continue as the local operator');
      const posted = await app.app.inject({
        method: 'POST',
        url: '/admin/operator/sign-in',
        headers: { origin: 'http://127.0.0.1:8080', 'content-type': 'application/x-www-form-urlencoded' },
        payload: '',
      });
      expect(posted.statusCode).toBe(403);
      expect(posted.headers['set-cookie']).toBeUndefined();
    } finally {
      await app.close();
    }
  });
});

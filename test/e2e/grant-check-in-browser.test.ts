/**
 * The grants form's check as it is typed (docs/admin-console.md), in a real
 * browser (Debian's Chromium through test/helpers/browser.ts): the demo
 * tenant's admin signs in as a person would, opens the grant for editing and
 * types into "Sees"; the refusal a save would give appears in the live region
 * next to the field, and clears once the pattern is fixed. Typing fast sends
 * one check, not one per key; a failed check says so and the form still
 * saves; without JavaScript the form works as before. axe-core finds no
 * serious or critical violation with the message showing; the page's
 * Content-Security-Policy allows scripts of this origin only, and the page
 * asks nothing of any other origin.
 */
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoBootstrap } from '@mcpgw/gateway/testing';
import { expectAccessibleAtEveryWidth, launchChromium, newContext } from '@mcpgw/test-helpers/browser';
import { freePort } from '@mcpgw/test-helpers/free-port';
import type { TestApp } from '@mcpgw/test-helpers/gateway';
import { buildTestApp } from '@mcpgw/test-helpers/gateway';

const SECRET = 'a browser test SECRETS_KEY of at least thirty-two characters';
const SLOW = { timeout: 90_000 };
const EDIT = '/admin/tenants/demo/grants?edit=handbook-readers';

let built: TestApp;
let base: string;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  const port = await freePort();
  built = await buildTestApp({
    bootstrap: demoBootstrap(),
    env: { HOST: '127.0.0.1', PORT: String(port), SECRETS_KEY: SECRET },
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

async function context(options: Parameters<typeof newContext>[1] = {}): Promise<BrowserContext> {
  const opened = await newContext(browser, { baseURL: base, ...options });
  contexts.push(opened);
  return opened;
}

/** Signs in from the console's link, clicking through what the demo's authorization server shows. */
async function signIn(page: Page): Promise<void> {
  await page.goto('/admin/tenants/demo/sign-in');
  const landed = `${base}/admin/tenants/demo/`;
  for (let step = 0; step < 5 && page.url() !== landed; step++) {
    const button = page.getByRole('button', { name: /^(Continue as the demo user|Allow|Sign in)$/ });
    await Promise.race([page.waitForURL(landed), button.first().waitFor()]);
    if (page.url() === landed) break;
    await Promise.all([page.waitForNavigation(), button.first().click()]);
  }
  await page.waitForURL(landed);
}

const isCheck = (request: Request) => request.method() === 'POST' && request.url().endsWith('/grants/check');

describe('the grants form checks "Sees" as it is typed', () => {
  let page: Page;
  const requested: string[] = [];
  const refusedByPolicy: string[] = [];

  beforeAll(async () => {
    page = await (await context()).newPage();
    page.on('request', (request) => requested.push(request.url()));
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) refusedByPolicy.push(message.text());
    });
    await signIn(page);
  }, 60_000);

  it('shows the refusal a save would give next to the field, and clears it once fixed', SLOW, async () => {
    const response = await page.goto(EDIT);
    expect(response?.status()).toBe(200);
    const policy = (await response?.allHeaders())?.['content-security-policy'] ?? '';
    expect(policy.split('; ')).toContain("script-src 'self'");
    expect(policy).not.toContain('unsafe-eval');

    const sees = page.getByLabel('Sees');
    const region = page.locator('#f-allow-check');
    expect(await region.getAttribute('aria-live')).toBe('polite');
    expect((await sees.getAttribute('aria-describedby'))?.split(' ')).toContain('f-allow-check');
    expect(await region.textContent()).toBe('');

    await sees.fill('handbook https://example.com/**');
    await expect
      .poll(() => region.textContent())
      .toMatch(/^Line 1: 'https:\/\/example\.com\/\*\*' can never match: its scheme is 'https:'/);
    expect(await sees.getAttribute('aria-invalid')).toBe('true');
    await expectAccessibleAtEveryWidth(page, 'grants-check-refused');

    await sees.fill('handbook file:///handbook/**');
    await expect.poll(() => region.textContent()).toBe('The patterns look valid.');
    expect(await sees.getAttribute('aria-invalid')).toBeNull();
    await expectAccessibleAtEveryWidth(page, 'grants-check-valid');

    // A source the tenant lacks, on the line that names it.
    await sees.fill('handbook\nnosuch');
    await expect.poll(() => region.textContent()).toBe("Line 2: no source 'nosuch' in this tenant; sources: handbook");
  });

  it('sends one check for a burst of typing, not one per key', SLOW, async () => {
    await page.goto(EDIT);
    const checks: Request[] = [];
    page.on('request', (request) => {
      if (isCheck(request)) checks.push(request);
    });
    const sees = page.getByLabel('Sees');
    await sees.fill('');
    await sees.pressSequentially('handbook file:///handbook/**', { delay: 20 });
    await expect.poll(() => page.locator('#f-allow-check').textContent()).toBe('The patterns look valid.');
    // `fill('')` and the typing are two bursts at most; 28 keys would be 28 checks without the debounce.
    expect(checks.length).toBeGreaterThanOrEqual(1);
    expect(checks.length).toBeLessThanOrEqual(2);
    expect(checks[0]!.postData()).toContain('csrf=');
  });

  it('says quietly that a check failed, and the form still saves', SLOW, async () => {
    await page.goto(EDIT);
    await page.route('**/grants/check', (route) => route.abort('connectionrefused'));
    const sees = page.getByLabel('Sees');
    await sees.fill('handbook https://example.com/**');
    await expect
      .poll(() => page.locator('#f-allow-check').textContent())
      .toBe('The patterns could not be checked just now; saving still checks them.');
    const [saved] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Save' }).click()]);
    expect(saved?.status()).toBe(422);
    expect(await page.locator('#f-allow-error').textContent()).toContain("its scheme is 'https:'");
    await page.unroute('**/grants/check');
  });

  it('asked nothing of any other origin, and the policy refused nothing', () => {
    const elsewhere = requested.filter((url) => !url.startsWith(`${base}/`));
    expect(elsewhere).toEqual([]);
    expect(requested.some((url) => url.startsWith(`${base}/admin/console.js?v=`))).toBe(true);
    expect(refusedByPolicy).toEqual([]);
  });
});

describe('the grants form without JavaScript', () => {
  it('saves and refuses as before, with the live region left empty', SLOW, async () => {
    const page = await (await context({ javaScriptEnabled: false })).newPage();
    await signIn(page);
    await page.goto(EDIT);
    const sees = page.getByLabel('Sees');
    await sees.fill('handbook https://example.com/**');
    const [refused] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Save' }).click()]);
    expect(refused?.status()).toBe(422);
    expect(await page.locator('#f-allow-error').textContent()).toContain("its scheme is 'https:'");
    expect(await page.locator('#f-allow-check').textContent()).toBe('');
    await page.getByLabel('Sees').fill('handbook file:///handbook/**');
    const [saved] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Save' }).click()]);
    expect(saved?.status()).toBe(200);
  });
});

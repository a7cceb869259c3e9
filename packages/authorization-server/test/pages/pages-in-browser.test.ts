import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  VIEWPORTS,
  expectNoSeriousAxeViolations,
  launchChromium,
  newContext,
  saveScreenshots,
  scrollsSideways,
} from '@mcpgw/test-helpers/browser';
import type { InteractionFixture } from '../interactions/interaction-fixture.js';
import { standInUpstream, startInteractionFixture } from '../interactions/interaction-fixture.js';

// Every page of the hosted authorization server, as a browser renders it
// when served by a real oidc-provider (MemoryAdapter storage) with the
// interaction handler mounted: axe-core finds no serious or critical
// violation at a laptop's width nor a phone's, nothing scrolls sideways, and
// screenshots land in test-artifacts/ for a person to look at.

const HOSTILE_NAME = `<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">${'Ｗ'.repeat(300)} \u202Eexe.gnp`;

let browser: Browser;
let demo: InteractionFixture;
let upstreamFixture: InteractionFixture;
const upstream = standInUpstream('alice@acme.example');
const contexts: BrowserContext[] = [];
beforeAll(async () => {
  browser = await launchChromium();
  demo = await startInteractionFixture({
    clients: [
      { client_id: 'notes-app', client_name: 'Notes App' },
      { client_id: `https://hostile.example/${'c'.repeat(200)}`, client_name: HOSTILE_NAME },
    ],
    login: { kind: 'demo', accountId: 'demo-user', userName: 'Demo User' },
  });
  upstreamFixture = await startInteractionFixture({
    clients: [{ client_id: 'notes-app', client_name: 'Notes App' }],
    login: upstream.upstream,
    extraRoutes: upstream.routes,
  });
});
afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  await Promise.all([demo?.close(), upstreamFixture?.close()]);
});

async function freshPage(): Promise<Page> {
  const context = await newContext(browser);
  contexts.push(context);
  return context.newPage();
}

/** What every page must pass, at both widths. */
async function checkPage(page: Page, name: string): Promise<void> {
  for (const [width, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    await expectNoSeriousAxeViolations(page, `${name} at the ${width} width`);
    expect(await scrollsSideways(page), `${name} scrolls sideways at the ${width} width`).toBe(false);
  }
  await page.setViewportSize(VIEWPORTS.laptop);
  expect(await page.locator('script').count(), `${name} has no script`).toBe(0);
  expect(await page.getByRole('main').count()).toBe(1);
  expect(await page.getByRole('banner').textContent()).toContain('Acme Research');
  expect(await page.getByRole('heading', { level: 1 }).count()).toBe(1);
  await saveScreenshots(page, name);
}

describe('the pages in a browser', () => {
  it('the demo sign-in page', async () => {
    const page = await freshPage();
    const response = await page.goto(demo.authorization('notes-app').url);
    expect(response?.headers()['content-security-policy']).toContain("default-src 'none'");
    expect(response?.headers()['x-frame-options']).toBe('DENY');
    await page.getByRole('button', { name: 'Continue as the demo user' }).waitFor();
    await checkPage(page, 'demo-sign-in');
  });

  it('the consent page', async () => {
    const page = await freshPage();
    await page.goto(demo.authorization('notes-app', 'openid profile resources:read').url);
    await page.getByRole('button', { name: 'Continue as the demo user' }).click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    // The inline style sheet is the one the CSP allows: a mismatch would leave the page unstyled.
    expect(await page.evaluate(`getComputedStyle(document.querySelector('button.primary')).backgroundColor`)).toBe(
      'rgb(29, 78, 216)',
    );
    await checkPage(page, 'consent');
  });

  it('the consent page of a client with a hostile name: escaped, stripped of bidi controls, cut and wrapped', async () => {
    const page = await freshPage();
    await page.goto(demo.authorization(`https://hostile.example/${'c'.repeat(200)}`).url);
    await page.getByRole('button', { name: 'Continue as the demo user' }).click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    const heading = (await page.getByRole('heading', { level: 1 }).textContent()) ?? '';
    expect(heading.startsWith('Allow <script>window.__pwned = 1</script><img src=x')).toBe(true);
    expect(heading).not.toContain('\u202E');
    expect([...heading].length).toBeLessThanOrEqual('Allow ?'.length + 80);
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    // Both buttons fit a phone's width, however long the name.
    await page.setViewportSize(VIEWPORTS.phone);
    for (const name of ['Allow', 'Deny']) {
      const box = await page.getByRole('button', { name }).boundingBox();
      expect(box?.x).toBeGreaterThanOrEqual(0);
      expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(VIEWPORTS.phone.width);
    }
    await checkPage(page, 'consent-hostile-client');
  });

  it('the error page of an expired or foreign interaction', async () => {
    const page = await freshPage();
    const response = await page.goto(`${demo.issuer}/interaction/not-a-pending-one`);
    expect(response?.status()).toBe(400);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('This sign-in has expired');
    await checkPage(page, 'error-expired');
  });

  it('the error page of a bad authorization request (oidc-provider renderError)', async () => {
    const page = await freshPage();
    const response = await page.goto(`${demo.issuer}/auth?client_id=nobody&response_type=code&scope=openid`);
    expect(response?.status()).toBe(400);
    expect(await page.getByRole('main').textContent()).toContain('invalid_client');
    await checkPage(page, 'error-bad-request');
  });

  it('the error page of a sign-in the upstream refused', async () => {
    const page = await freshPage();
    upstream.refuseNext();
    await page.goto(upstreamFixture.authorization('notes-app').url);
    await page.getByRole('link', { name: 'Return to the application' }).waitFor();
    await checkPage(page, 'error-upstream-refused');
  });

  it('the error page of a refused answer', async () => {
    const page = await freshPage();
    await page.goto(demo.authorization('notes-app').url);
    await page.evaluate(`document.querySelector('input[name="csrf"]').value = 'forged'`);
    await page.getByRole('button', { name: 'Continue as the demo user' }).click();
    await page.getByRole('heading', { name: 'This answer was refused' }).waitFor();
    await checkPage(page, 'error-refused-answer');
  });

  it('the error page of a server failure (the consent store down)', async () => {
    const page = await freshPage();
    await page.goto(demo.authorization('notes-app').url);
    const find = demo.consentMemory.find;
    demo.consentMemory.find = () => Promise.reject(new Error('the store is down'));
    try {
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.getByRole('button', { name: 'Continue as the demo user' }).click(),
      ]);
      expect(response.status()).toBe(500);
    } finally {
      demo.consentMemory.find = find;
    }
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Something went wrong');
    expect(await page.getByRole('main').textContent()).not.toContain('the store is down');
    await checkPage(page, 'error-server');
  });

  it('the accessibility check fails, with a readable report, on a page that is not accessible', async () => {
    const page = await freshPage();
    await page.setContent(
      '<!doctype html><html><body><input type="text"><p style="color:#aaa;background:#fff">faint</p></body></html>',
    );
    const failure = await expectNoSeriousAxeViolations(page, 'a bad page').then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure?.message).toContain('a bad page: axe-core found accessibility violations');
    expect(failure?.message).toMatch(/\[critical\] label: /);
    expect(failure?.message).toMatch(/\[serious\] color-contrast: /);
    expect(failure?.message).toContain('at input');
  });
});

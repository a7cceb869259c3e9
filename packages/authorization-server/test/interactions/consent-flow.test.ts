import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, newContext, tabTo } from '@mcpgw/test-helpers/browser';
import type { InteractionFixture } from './interaction-fixture.js';
import { startInteractionFixture } from './interaction-fixture.js';

// The consent flow in a real browser (Debian's Chromium) against a real
// oidc-provider (its MemoryAdapter for storage: see interaction-fixture.ts),
// with the demo login: what a user does with the keyboard or the mouse, and
// what the client application receives at its redirect URI.

let browser: Browser;
let fixture: InteractionFixture;
const contexts: BrowserContext[] = [];
beforeAll(async () => {
  browser = await launchChromium();
  fixture = await startInteractionFixture({
    clients: [
      { client_id: 'notes-app', client_name: 'Notes App' },
      { client_id: 'deny-app', client_name: 'Deny App' },
      { client_id: 'remembered-app', client_name: 'Remembered App' },
      { client_id: 'nojs-app', client_name: 'No Script App' },
    ],
    login: { kind: 'demo', accountId: 'demo-user', userName: 'Demo User' },
  });
});
afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  await fixture?.close();
});

async function freshPage(options: Parameters<typeof newContext>[1] = {}): Promise<Page> {
  const context = await newContext(browser, options);
  contexts.push(context);
  return context.newPage();
}

/** The interaction pages the browser loaded (GET), by their heading's kind. */
function interactionPagesOf(page: Page): string[] {
  const pages: string[] = [];
  page.on('request', (request) => {
    if (request.method() === 'GET' && new URL(request.url()).pathname.includes('/interaction/'))
      pages.push(request.url());
  });
  return pages;
}

async function backAtClient(page: Page): Promise<URLSearchParams> {
  await page.waitForURL((at) => at.href.startsWith(fixture.redirectUri));
  return new URL(page.url()).searchParams;
}

function accessTokenClaims(body: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(Buffer.from(String(body.access_token).split('.')[1] ?? '', 'base64url').toString()) as Record<
    string,
    unknown
  >;
}

describe('the consent flow', () => {
  it('completes with the keyboard only, and the client receives a code it can redeem', async () => {
    const page = await freshPage();
    const { url, verifier, state } = fixture.authorization('notes-app');
    await page.goto(url);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');

    const login = await tabTo(page, 'Continue as the demo user');
    expect(login.outline).toMatch(/^solid [3-9]px$/);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Allow Notes App?' }).waitFor();
    const main = page.getByRole('main');
    expect(await main.textContent()).toContain('Acme Research');
    expect(await main.textContent()).toContain('resources:read');
    expect(await main.textContent()).toContain('notes-app');
    expect(await main.textContent()).toContain(new URL(fixture.redirectUri).host);

    const allow = await tabTo(page, 'Allow');
    expect(allow.outline).toMatch(/^solid [3-9]px$/);
    await page.keyboard.press('Enter');

    const answer = await backAtClient(page);
    expect(answer.get('state')).toBe(state);
    expect(answer.get('iss')).toBe(fixture.issuer);
    const token = await fixture.redeem('notes-app', answer.get('code') ?? '', verifier);
    expect(token.status).toBe(200);
    expect(accessTokenClaims(token.body)).toMatchObject({
      aud: fixture.resource,
      sub: 'demo-user',
      client_id: 'notes-app',
      scope: 'resources:read',
    });
  });

  it('answers Deny with error=access_denied at the client redirect URI and remembers nothing', async () => {
    const page = await freshPage();
    const { url, state } = fixture.authorization('deny-app');
    await page.goto(url);
    await page.getByRole('button', { name: 'Continue as the demo user' }).click();
    await page.getByRole('button', { name: 'Deny' }).click();

    const answer = await backAtClient(page);
    expect(answer.get('error')).toBe('access_denied');
    expect(answer.get('state')).toBe(state);
    expect(answer.get('code')).toBeNull();
    expect(await fixture.consentMemory.find('demo-user', 'deny-app')).toBeUndefined();

    // Asked again, the page is shown again: a refusal is not remembered as consent.
    const pages = interactionPagesOf(page);
    await page.goto(fixture.authorization('deny-app').url);
    await page.getByRole('heading', { name: 'Allow Deny App?' }).waitFor();
    expect(pages).toHaveLength(1);
  });

  it('answers Cancel on the sign-in page with error=access_denied', async () => {
    const page = await freshPage();
    await page.goto(fixture.authorization('deny-app').url);
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect((await backAtClient(page)).get('error')).toBe('access_denied');
  });

  it('remembers consent per user and client, asks only for new scopes, and asks again once the grant is gone', async () => {
    // First time: sign in, consent.
    const first = await freshPage();
    await first.goto(fixture.authorization('remembered-app').url);
    await first.getByRole('button', { name: 'Continue as the demo user' }).click();
    await first.getByRole('button', { name: 'Allow' }).click();
    expect((await backAtClient(first)).get('code')).toBeTruthy();
    const grantId = await fixture.consentMemory.find('demo-user', 'remembered-app');
    expect(grantId).toBeDefined();

    // Another browser (no session): sign in again, and no consent page.
    const second = await freshPage();
    const secondPages = interactionPagesOf(second);
    const again = fixture.authorization('remembered-app');
    await second.goto(again.url);
    await second.getByRole('button', { name: 'Continue as the demo user' }).click();
    const answer = await backAtClient(second);
    expect(secondPages).toHaveLength(1);
    const token = await fixture.redeem('remembered-app', answer.get('code') ?? '', again.verifier);
    expect(accessTokenClaims(token.body)).toMatchObject({ scope: 'resources:read', sub: 'demo-user' });

    // The same browser with one scope more: the page names only the new one; Allow extends the same grant.
    const secondPagesBefore = secondPages.length;
    await second.goto(fixture.authorization('remembered-app', 'openid profile resources:read').url);
    await second.getByRole('heading', { name: 'Allow Remembered App?' }).waitFor();
    expect(secondPages.length).toBe(secondPagesBefore + 1);
    const listed = await second.locator('ul.scopes li').allTextContents();
    expect(listed).toEqual([expect.stringContaining('profile')]);
    await second.getByRole('button', { name: 'Allow' }).click();
    expect((await backAtClient(second)).get('code')).toBeTruthy();
    expect(await fixture.consentMemory.find('demo-user', 'remembered-app')).toBe(grantId);

    // The grant deleted (what revoking it does): the consent page is back, in the same browser too.
    const grant = await fixture.provider.Grant.find(grantId ?? '');
    await grant?.destroy();
    await second.goto(fixture.authorization('remembered-app').url);
    await second.getByRole('heading', { name: 'Allow Remembered App?' }).waitFor();
    await second.getByRole('button', { name: 'Allow' }).click();
    expect((await backAtClient(second)).get('code')).toBeTruthy();
    const renewed = await fixture.consentMemory.find('demo-user', 'remembered-app');
    expect(renewed).toBeDefined();
    expect(renewed).not.toBe(grantId);
  });

  it('works with JavaScript disabled', async () => {
    const page = await freshPage({ javaScriptEnabled: false });
    const { url, verifier } = fixture.authorization('nojs-app');
    await page.goto(url);
    await page.getByRole('button', { name: 'Continue as the demo user' }).click();
    await page.getByRole('button', { name: 'Allow' }).click();
    const answer = await backAtClient(page);
    expect((await fixture.redeem('nojs-app', answer.get('code') ?? '', verifier)).status).toBe(200);
  });
});

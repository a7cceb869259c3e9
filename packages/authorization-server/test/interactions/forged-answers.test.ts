import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, newContext } from '@mcpgw/test-helpers/browser';
import type { InteractionFixture } from './interaction-fixture.js';
import { startInteractionFixture } from './interaction-fixture.js';

// A consent answer that did not come from the page this server showed
// (RFC 6749 section 10.12) is refused with 403 and changes nothing: no grant,
// no code, the interaction still pending and answerable from the real page.
// The forged posts travel in the victim's own browser context, so they carry
// its interaction cookie: only the token tells them apart.

let browser: Browser;
let fixture: InteractionFixture;
let context: BrowserContext;
beforeAll(async () => {
  browser = await launchChromium();
  fixture = await startInteractionFixture({
    // One client per test: an Allow is remembered, and each test needs the consent page.
    clients: ['one', 'two', 'three'].map((n) => ({ client_id: `csrf-${n}`, client_name: `Csrf ${n}` })),
    login: { kind: 'demo', accountId: 'demo-user', userName: 'Demo User' },
  });
});
afterAll(async () => {
  await context?.close();
  await browser?.close();
  await fixture?.close();
});

async function atConsentPage(n: string): Promise<{ page: Page; action: string; token: string; uid: string }> {
  await context?.close();
  context = await newContext(browser);
  const page = await context.newPage();
  await page.goto(fixture.authorization(`csrf-${n}`).url);
  await page.getByRole('button', { name: 'Continue as the demo user' }).click();
  await page.getByRole('heading', { name: `Allow Csrf ${n}?` }).waitFor();
  const action = new URL((await page.locator('form').getAttribute('action')) ?? '', fixture.base).href;
  const token = (await page.locator('input[name="csrf"]').getAttribute('value')) ?? '';
  return { page, action, token, uid: action.split('/').at(-1) ?? '' };
}

describe('a forged consent answer', () => {
  it('is refused with 403 without a token, with a wrong one or with another interaction’s, and changes nothing', async () => {
    const { page, action, token, uid } = await atConsentPage('one');
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const otherToken = await (async () => {
      // A real token, of another interaction of the same server.
      const other = await newContext(browser);
      const otherPage = await other.newPage();
      await otherPage.goto(fixture.authorization('csrf-one').url);
      const value = (await otherPage.locator('input[name="csrf"]').getAttribute('value')) ?? '';
      await other.close();
      return value;
    })();
    expect(otherToken).not.toBe(token);

    const forms: Array<Record<string, string>> = [
      { decision: 'allow' },
      { decision: 'allow', csrf: '' },
      { decision: 'allow', csrf: `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}` },
      { decision: 'allow', csrf: otherToken },
      { decision: 'deny', csrf: otherToken },
    ];
    for (const form of forms) {
      const response = await context.request.post(action, { form, maxRedirects: 0 });
      expect(response.status(), JSON.stringify(form)).toBe(403);
      expect(response.headers()['location']).toBeUndefined();
      expect(await response.text()).toContain('This answer was refused');
    }

    expect(fixture.redirects).toHaveLength(0);
    expect(await fixture.consentMemory.find('demo-user', 'csrf-one')).toBeUndefined();
    const interaction = await fixture.provider.Interaction.find(uid);
    expect(interaction?.result).toBeUndefined();

    // The real page still works.
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((at) => at.href.startsWith(fixture.redirectUri));
    expect(fixture.redirects.at(-1)?.get('code')).toBeTruthy();
  });

  it('is refused when the page’s own form is sent without its token', async () => {
    const { page } = await atConsentPage('two');
    await page.evaluate(`document.querySelector('input[name="csrf"]').remove()`);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Allow' }).click(),
    ]);
    expect(response.status()).toBe(403);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('This answer was refused');
    expect(await fixture.consentMemory.find('demo-user', 'csrf-two')).toBeUndefined();
  });

  it('is refused when it is not a form post', async () => {
    const { action, token } = await atConsentPage('three');
    const json = await context.request.post(action, { data: { decision: 'allow', csrf: token }, maxRedirects: 0 });
    expect(json.status()).toBe(415);
    const large = await context.request.post(action, {
      form: { decision: 'allow', csrf: token, padding: 'x'.repeat(10_000) },
      maxRedirects: 0,
    });
    expect(large.status()).toBe(413);
    expect(await fixture.consentMemory.find('demo-user', 'csrf-three')).toBeUndefined();
  });
});

import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, newContext } from '@mcpgw/test-helpers/browser';
import type { InteractionFixture } from './interaction-fixture.js';
import { standInUpstream, startInteractionFixture } from './interaction-fixture.js';

// Sign-in at the upstream identity provider: the login prompt sends the
// browser to the URL the upstream port returns, and `${issuer}/callback`
// resumes the interaction with the account the port reports. The port here
// is a stand-in that signs in at once (the upstream module's own tests run the
// real one against a local OpenID Connect provider); the browser, the
// provider and the handler are real.

let browser: Browser;
let fixture: InteractionFixture;
const upstream = standInUpstream('alice@acme.example');
const contexts: BrowserContext[] = [];
/** What the handler told the audit trail: each failed upstream sign-in and the client it was for. */
const failures: Array<{ error: string; clientId: string | undefined }> = [];
beforeAll(async () => {
  browser = await launchChromium();
  fixture = await startInteractionFixture({
    clients: [
      { client_id: 'upstream-app', client_name: 'Upstream App' },
      { client_id: 'refused-app', client_name: 'Refused App' },
    ],
    login: upstream.upstream,
    extraRoutes: upstream.routes,
    onUpstreamFailure: (failure, clientId) => failures.push({ error: failure.error, clientId }),
  });
});
afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  await fixture?.close();
});

async function freshContext(): Promise<BrowserContext> {
  const context = await newContext(browser);
  contexts.push(context);
  return context;
}

describe('the upstream sign-in', () => {
  it('goes to the upstream, comes back through the callback and asks for consent as the signed-in user', async () => {
    const page = await (await freshContext()).newPage();
    const visited: string[] = [];
    page.on('request', (request) => visited.push(new URL(request.url()).pathname));
    const { url, verifier } = fixture.authorization('upstream-app');
    await page.goto(url);
    await page.getByRole('heading', { name: 'Allow Upstream App?' }).waitFor();
    expect(visited).toEqual(expect.arrayContaining(['/upstream/authorize', '/t/acme/oauth/callback']));
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((at) => at.href.startsWith(fixture.redirectUri));
    const token = await fixture.redeem('upstream-app', fixture.redirects.at(-1)?.get('code') ?? '', verifier);
    const claims = JSON.parse(Buffer.from(String(token.body.access_token).split('.')[1] ?? '', 'base64url').toString());
    expect(claims).toMatchObject({ sub: 'alice@acme.example', client_id: 'upstream-app' });
    expect(failures).toEqual([]);
  });

  it('shows why when the upstream refuses, then answers the client with access_denied', async () => {
    const page = await (await freshContext()).newPage();
    upstream.refuseNext();
    const { url, state } = fixture.authorization('refused-app');
    const callback = page.waitForResponse((response) => new URL(response.url()).pathname === '/t/acme/oauth/callback');
    await page.goto(url);
    expect((await callback).status()).toBe(403);
    // The audit trail hears of it, with the client the sign-in was for.
    expect(failures).toEqual([{ error: 'access_denied', clientId: 'refused-app' }]);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Your sign-in did not complete');
    const main = (await page.getByRole('main').textContent()) ?? '';
    expect(main).toContain('access_denied');
    // The upstream's description is shown as text, never as markup.
    expect(main).toContain('AADSTS50105: <b>not assigned</b>');
    expect(await page.locator('main b').count()).toBe(0);

    await page.getByRole('link', { name: 'Return to the application' }).click();
    await page.waitForURL((at) => at.href.startsWith(fixture.redirectUri));
    const answer = new URL(page.url()).searchParams;
    expect(answer.get('error')).toBe('access_denied');
    expect(answer.get('state')).toBe(state);
  });

  it('resumes nothing from a callback replayed in another browser', async () => {
    // The victim's browser goes as far as the upstream's answer; its redirect to the callback is
    // not followed (the requests share the browser context's cookies), the attacker has the URL.
    const victim = await freshContext();
    let location = fixture.authorization('upstream-app').url;
    while (!location.includes('/oauth/callback')) {
      const response = await victim.request.get(location, { maxRedirects: 0 });
      expect(response.status()).toBe(303);
      location = new URL(response.headers()['location'] ?? '', location).href;
    }

    const attacker = await (await freshContext()).newPage();
    const before = fixture.redirects.length;
    await attacker.goto(location);
    // The callback stores the login on the interaction and sends the browser on to resume it;
    // without that interaction's resume cookie, oidc-provider refuses.
    expect(await attacker.getByRole('heading', { level: 1 }).textContent()).toBe('This sign-in request cannot go on');
    expect(await attacker.getByRole('main').textContent()).toContain('invalid_request');
    expect(fixture.redirects.length).toBe(before);
  });
});

/**
 * Operators of OPERATOR_ISSUER sign in to the console in a real browser
 * (Debian's Chromium through test/helpers/browser.ts): the operator sign-in
 * page offers the issuer, the browser follows the authorization code grant
 * with PKCE (RFC 6749 section 4.1, RFC 7636 section 4) through an independent
 * OpenID Connect issuer (oidc-provider on its own port, automatic consent) and
 * lands on the tenant list; a gateway with OPERATOR_ISSUER but no console
 * client names the settings to add. axe passes on each page at both widths.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoBootstrap } from '@mcpgw/gateway/testing';
import { expectAccessibleAtEveryWidth, launchChromium, newContext } from '@mcpgw/test-helpers/browser';
import { freePort } from '@mcpgw/test-helpers/free-port';
import type { TestApp } from '@mcpgw/test-helpers/gateway';
import { buildTestApp } from '@mcpgw/test-helpers/gateway';
import { startStandaloneIssuer } from '@mcpgw/test-helpers/standalone-issuer';

const SLOW = { timeout: 90_000 };
const CLIENT_ID = 'gateway-operator-console';
const CLIENT_SECRET = 'the-operator-console-client-secret';
const SECRETS_KEY = 'an operator issuer browser test key of 32+ characters';

let keysDir: string;
let idp: Awaited<ReturnType<typeof startStandaloneIssuer>>;
const gateways: TestApp[] = [];
let browser: Browser;
const contexts: BrowserContext[] = [];

/** A gateway on its own port with the demo tenant and these settings. */
async function gatewayWith(env: (base: string) => Record<string, string>): Promise<string> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const built = await buildTestApp({
    bootstrap: demoBootstrap(),
    env: { HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL: base, SECRETS_KEY, ...env(base) },
    admin: {},
  });
  gateways.push(built);
  await built.app.listen({ host: '127.0.0.1', port });
  return base;
}

let base: string;

beforeAll(async () => {
  keysDir = await mkdtemp(join(tmpdir(), 'operator-idp-browser-'));
  const idpPort = await freePort();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  idp = await startStandaloneIssuer({
    port: idpPort,
    keystorePath: join(keysDir, 'keys.json'),
    resources: [`${base}/admin/v1`],
    scopes: ['mcpgw:operator'],
    clients: [{ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUris: [`${base}/admin/operator/callback`] }],
    logger: pino({ level: 'silent' }),
    roles: () => ['gateway-operator'],
  });
  const built = await buildTestApp({
    bootstrap: demoBootstrap(),
    env: {
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL: base,
      SECRETS_KEY,
      OPERATOR_ISSUER: idp.issuer,
      OPERATOR_CONSOLE_CLIENT_ID: CLIENT_ID,
      OPERATOR_CONSOLE_CLIENT_SECRET: CLIENT_SECRET,
      OPERATOR_CONSOLE_SCOPE: 'openid mcpgw:operator',
    },
    admin: {},
  });
  gateways.push(built);
  await built.app.listen({ host: '127.0.0.1', port });
  browser = await launchChromium();
});
afterAll(async () => {
  for (const open of contexts) await open.close();
  await browser?.close();
  for (const built of gateways) await built.close();
  await idp?.close();
  await rm(keysDir, { recursive: true, force: true });
});

async function freshPage(baseURL: string): Promise<Page> {
  const opened = await newContext(browser, { baseURL });
  contexts.push(opened);
  return opened.newPage();
}

const axe = expectAccessibleAtEveryWidth;

describe('operators of OPERATOR_ISSUER in the browser', () => {
  it('sign in at the issuer and land on the tenant list', SLOW, async () => {
    const page = await freshPage(base);
    await page.goto('/admin/operator/sign-in');
    await axe(page, 'operator-sign-in-issuer');
    await Promise.all([
      page.waitForURL(`${base}/admin/tenants`),
      page.getByRole('link', { name: `Sign in with ${idp.issuer}` }).click(),
    ]);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toMatch(/Tenants/);
    expect(await page.getByRole('link', { name: 'demo', exact: true }).count()).toBeGreaterThan(0);
    await axe(page, 'operator-tenants-issuer');
  });

  it('name the settings to add when OPERATOR_ISSUER has no console client', SLOW, async () => {
    const bare = await gatewayWith(() => ({ OPERATOR_ISSUER: idp.issuer }));
    const page = await freshPage(bare);
    await page.goto('/admin/operator/sign-in');
    const main = (await page.getByRole('main').textContent()) ?? '';
    expect(main).toContain('OPERATOR_CONSOLE_CLIENT_ID');
    expect(await page.getByRole('link', { name: /Sign in with/ }).count()).toBe(0);
    await axe(page, 'operator-sign-in-settings');
  });
});

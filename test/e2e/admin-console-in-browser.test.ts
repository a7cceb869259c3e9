/**
 * The admin console (docs/admin-console.md) in a real browser (Debian's
 * Chromium, headless, through test/helpers/browser.ts): the demo tenant's
 * admin signs in as a person would (clicking through the authorization
 * server's pages when it shows any), adds a source and a grant through the
 * forms, previews a caller, finds both changes in the audit log and sees the
 * new resource in an MCP client's listing (the official client, with a token
 * from the token CLI's minter). Two tabs make a stale edit (412) and reapply
 * it. A session of one tenant never sees another's pages. Every page passes
 * axe-core (no serious or critical violation) at a laptop's and a phone's
 * width and is saved as a screenshot under test-artifacts/.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoBootstrap, mintOperatorToken, mintTenantToken } from '@mcpgw/gateway/testing';
import {
  VIEWPORTS,
  expectNoSeriousAxeViolations,
  launchChromium,
  newContext,
  saveScreenshots,
  scrollsSideways,
} from '@mcpgw/test-helpers/browser';
import { freePort } from '@mcpgw/test-helpers/free-port';
import type { TestApp } from '@mcpgw/test-helpers/gateway';
import { buildTestApp } from '@mcpgw/test-helpers/gateway';

const SECRET = 'a browser test SECRETS_KEY of at least thirty-two characters';
const SLOW = { timeout: 90_000 };

let built: TestApp;
let base: string;
let browser: Browser;
let admin: BrowserContext;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  const port = await freePort();
  const demo = demoBootstrap();
  const tenants = (demo.document as { tenants: Record<string, unknown>[] }).tenants;
  const acme = {
    id: 'acme',
    name: 'Acme Research',
    auth: { issuers: [{ development: true }] },
    sources: [{ id: 'vault', type: 'static', resources: [{ uri: 'vault://plans', name: 'plans', text: 'acme only' }] }],
    grants: [{ name: 'all', match: {}, allow: [{ source: 'vault' }] }],
    adminSignIn: { clientId: 'mcpgw-admin-acme', scopes: ['openid', 'mcpgw:admin'] },
    adminRoleBindings: [{ name: 'acme-admins', scopes: ['mcpgw:admin'] }],
  };
  built = await buildTestApp({
    bootstrap: { ...demo, document: { tenants: [...tenants, acme] } },
    env: { HOST: '127.0.0.1', PORT: String(port), SECRETS_KEY: SECRET },
    admin: {},
  });
  base = `http://127.0.0.1:${port}`;
  await built.app.listen({ host: '127.0.0.1', port });
  browser = await launchChromium();
  admin = await context();
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

/** What every console page must pass, at both widths, with its screenshots saved. */
async function checkPage(page: Page, name: string): Promise<void> {
  for (const [width, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    await expectNoSeriousAxeViolations(page, `${name} at the ${width} width`);
    expect(await scrollsSideways(page), `${name} scrolls sideways at the ${width} width`).toBe(false);
  }
  await page.setViewportSize(VIEWPORTS.laptop);
  // Nothing inline; the grants pages load the console's one script file, from this origin.
  expect(await page.locator('script:not([src])').count(), `${name} has no inline script`).toBe(0);
  const scripts = await page.locator('script[src]').evaluateAll((found) => found.map((s) => s.getAttribute('src')));
  const grantsPage = /\/grants(\/match)?$/.test(new URL(page.url()).pathname);
  expect(scripts, `${name} loads the console script only on the grants page`).toEqual(
    grantsPage ? [expect.stringMatching(/^\/admin\/console\.js\?v=[0-9a-f]{16}$/)] : [],
  );
  expect(await page.getByRole('main').count(), `${name} has one main`).toBe(1);
  expect(await page.getByRole('heading', { level: 1 }).count(), `${name} has one h1`).toBe(1);
  await saveScreenshots(page, `console-${name}`);
}

/**
 * Signs in from the console's link as a person would: follows the redirects
 * and clicks through whatever the tenant's authorization server shows (a
 * demo login, a consent page) until the browser is back on the console.
 */
async function signIn(page: Page, tenantId: string): Promise<void> {
  await page.goto(`/admin/tenants/${tenantId}/sign-in`);
  const landed = `${base}/admin/tenants/${tenantId}/`;
  for (let step = 0; step < 5 && page.url() !== landed; step++) {
    const button = page.getByRole('button', { name: /^(Continue as the demo user|Allow|Sign in)$/ });
    await Promise.race([page.waitForURL(landed), button.first().waitFor()]);
    if (page.url() === landed) break;
    await Promise.all([page.waitForNavigation(), button.first().click()]);
  }
  await page.waitForURL(landed);
}

/** The console's form submit: click and wait for the page it ends on (after a 303, the page read again). */
async function submit(page: Page, button: string): Promise<number | undefined> {
  const [response] = await Promise.all([
    page.waitForNavigation(),
    page.getByRole('button', { name: button, exact: true }).click(),
  ]);
  return response?.status();
}

describe('the admin console in a browser', () => {
  let page: Page;

  it('signs the demo admin in and lands on the overview', SLOW, async () => {
    page = await admin.newPage();
    await signIn(page, 'demo');
    await expect.poll(() => page.getByRole('banner').textContent()).toContain('Signed in as');
    expect(await page.getByRole('row', { name: /handbook/ }).textContent()).toContain('healthy');
    await checkPage(page, 'overview');
  });

  it('adds a source through the form, with a refusal shown at its field first', SLOW, async () => {
    await page.goto('/admin/tenants/demo/sources');
    await checkPage(page, 'sources');
    await page.getByLabel('Name', { exact: true }).fill('notes');
    await page.getByLabel('Type').selectOption('static');
    await page.getByLabel('Options (JSON, without credentials)').fill('{"resources": "not a list"}');
    expect(await submit(page, 'Add source')).toBe(422);
    expect(await page.getByLabel('Options (JSON, without credentials)').getAttribute('aria-invalid')).toBe('true');
    await checkPage(page, 'sources-refused');
    await page.getByLabel('Name', { exact: true }).fill('notes');
    await page
      .getByLabel('Options (JSON, without credentials)')
      .fill('{"resources": [{"uri": "notes://welcome", "name": "welcome", "text": "Welcome aboard"}]}');
    expect(await submit(page, 'Add source')).toBe(200);
    expect(await page.getByRole('status').textContent()).toContain('notes');
    expect(await page.getByRole('row', { name: /^notes/ }).textContent()).toContain('static');
    await page.goto('/admin/tenants/demo/sources?edit=notes');
    await checkPage(page, 'sources-edit');
  });

  it('adds a grant through the form', SLOW, async () => {
    await page.goto('/admin/tenants/demo/grants');
    await checkPage(page, 'grants');
    await page.getByLabel('Name', { exact: true }).fill('notes-readers');
    await page.getByLabel('Scopes').fill('mcp:read');
    await page.getByLabel('Sees').fill('notes');
    expect(await submit(page, 'Add grant')).toBe(200);
    expect(await page.getByRole('row', { name: /^notes-readers/ }).textContent()).toContain('notes');
  });

  it('previews a caller and shows the new source in what it sees', SLOW, async () => {
    await page.goto('/admin/tenants/demo/preview');
    await checkPage(page, 'preview');
    await page.locator('#f-a-claims').fill('{"sub": "alice", "scope": "mcp:read"}');
    await page.locator('#f-b-claims').fill('{"sub": "bob", "scope": "nothing"}');
    expect(await submit(page, 'Preview')).toBe(200);
    const main = (await page.getByRole('main').textContent()) ?? '';
    expect(main).toMatch(/Grants matched:\s*handbook-readers, notes-readers|Grants matched:\s*notes-readers/);
    expect(main).toContain('notes://welcome');
    await checkPage(page, 'preview-result');
  });

  it('checks pasted claims against the grants, naming the condition a grant fails', SLOW, async () => {
    await page.goto('/admin/tenants/demo/grants');
    await page.locator('#f-check-claims').fill('{"sub": "bob", "scope": "nothing"}');
    expect(await submit(page, 'Check')).toBe(200);
    const refused = (await page.getByRole('row', { name: /^notes-readers/ }).textContent()) ?? '';
    expect(refused).toMatch(/does not match\s*scopes needs one of mcp:read; the caller's\s*scopes: nothing/);
    await checkPage(page, 'grants-claims-check');
    await page.locator('#f-check-claims').fill('{"sub": "alice", "scope": "mcp:read"}');
    expect(await submit(page, 'Check')).toBe(200);
    expect(await page.getByRole('row', { name: /^notes-readers/ }).textContent()).toContain('matches');
    await page.locator('#f-check-claims').fill('{"sub": ');
    expect(await submit(page, 'Check')).toBe(422);
    expect(await page.locator('#f-check-claims').getAttribute('aria-invalid')).toBe('true');
  });

  it('shows both changes in the audit log', SLOW, async () => {
    await page.goto('/admin/tenants/demo/audit');
    const main = (await page.getByRole('main').textContent()) ?? '';
    expect(main).toContain('notes-readers');
    expect(main).toMatch(/source[^]*notes/);
    await checkPage(page, 'audit');
    await page.getByLabel('Target name').fill('notes-readers');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/targetId=notes-readers/);
    expect(await page.getByRole('main').textContent()).not.toContain('handbook-readers');
    await checkPage(page, 'audit-filtered');
  });

  it("puts the new source in an MCP client's listing", SLOW, async () => {
    const { token } = await mintTenantToken(built.config, { tenant: 'demo' });
    const client = new Client(
      { name: 'console-browser-test', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/t/demo/mcp', base), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    try {
      const { resources } = await client.listResources();
      expect(resources.map((resource) => resource.uri)).toContain('notes://welcome');
      const read = await client.readResource({ uri: 'notes://welcome' });
      expect(read.contents[0]).toMatchObject({ text: 'Welcome aboard' });
    } finally {
      await client.close();
    }
    // The overview's charts count those requests (read and list, in this minute).
    await page.goto('/admin/tenants/demo/');
    const requests = page.getByRole('figure', { name: /Requests per minute/ });
    expect(await requests.locator('rect').count()).toBeGreaterThan(1);
    expect(await requests.textContent()).toMatch(/latest [1-9]/);
    await page.getByText('The numbers, per minute').click();
    const row = page.getByRole('region', { name: 'Traffic per minute' }).locator('tbody tr').last();
    expect(Number(await row.locator('td').first().textContent())).toBeGreaterThanOrEqual(3);
    await checkPage(page, 'overview-traffic');
    // The access activity names the caller by fingerprint and client, the resource it read and its grants.
    await page.goto('/admin/tenants/demo/access?resource=notes');
    const rows = page.getByRole('region', { name: 'Access activity' }).locator('tbody tr');
    expect(await rows.count()).toBe(1);
    expect(await rows.first().textContent()).toMatch(/read\s*notes:\/\/welcome[^]*notes-readers/);
    expect(await page.content()).not.toContain(token);
    await checkPage(page, 'access');
    // The grants page names that caller beside the grant it matched, linked to its access activity.
    const fingerprint = (await rows.first().locator('th code').textContent()) ?? '';
    expect(fingerprint).not.toBe('');
    await page.goto('/admin/tenants/demo/grants');
    const grant = page.getByRole('row', { name: /^notes-readers/ });
    expect(await grant.getByRole('link', { name: fingerprint }).getAttribute('href')).toBe(
      `/admin/tenants/demo/access?caller=${encodeURIComponent(fingerprint)}`,
    );
    await checkPage(page, 'grants-recent-callers');
  });

  it('answers a stale edit from a second tab with 412 and what changed, and reapplies it', SLOW, async () => {
    const first = await admin.newPage();
    const second = await admin.newPage();
    await first.goto('/admin/tenants/demo/grants?edit=notes-readers');
    await second.goto('/admin/tenants/demo/grants?edit=notes-readers');
    await first.getByLabel('Groups').fill('editors');
    expect(await submit(first, 'Save')).toBe(200);
    await second.getByLabel('Groups').fill('writers');
    expect(await submit(second, 'Save')).toBe(412);
    const alert = second.getByRole('alert');
    expect(await alert.textContent()).toContain('Someone changed this since you opened it');
    expect(await alert.textContent()).toContain('/match/groups');
    expect(await second.getByLabel('Groups').inputValue()).toBe('writers');
    await checkPage(second, 'grants-stale');
    expect(await submit(second, 'Reapply my change')).toBe(200);
    await second.goto('/admin/tenants/demo/grants?edit=notes-readers');
    expect(await second.getByLabel('Groups').inputValue()).toBe('writers');
    await first.close();
    await second.close();
  });

  it("never shows a tenant admin of demo anything of acme's, as if acme did not exist", SLOW, async () => {
    for (const path of ['/admin/tenants/acme/', '/admin/tenants/acme/sources', '/admin/tenants/acme/audit']) {
      const response = await page.goto(path);
      expect(response?.status()).toBe(404);
      const text = (await page.content()).toLowerCase();
      expect(text).not.toContain('vault');
      expect(text).not.toContain('acme research');
    }
    const missing = await page.goto('/admin/tenants/nosuch/sources');
    expect(missing?.status()).toBe(404);
    await checkPage(page, 'not-found');
    // No link on the demo admin's pages leads to another tenant.
    await page.goto('/admin/tenants/demo/');
    const hrefs = await page.locator('a[href]').evaluateAll((links) => links.map((a) => a.getAttribute('href') ?? ''));
    expect(hrefs.filter((href) => href.includes('/tenants/') && !href.includes('/tenants/demo/'))).toEqual([]);
    // A form of demo's posted at acme's route changes nothing there.
    const before = JSON.stringify(await built.app.controlPlane!.store.listEntities('acme', 'grant'));
    await page.goto('/admin/tenants/demo/grants');
    await page.locator('form.stack').evaluate((form) => form.setAttribute('action', '/admin/tenants/acme/grants'));
    await page.getByLabel('Name', { exact: true }).fill('intruder');
    await page.getByLabel('Sees').fill('vault');
    expect(await submit(page, 'Add grant')).toBe(404);
    expect(JSON.stringify(await built.app.controlPlane!.store.listEntities('acme', 'grant'))).toBe(before);
  });

  it('passes axe at both widths on every page of the console', SLOW, async () => {
    const tenantPages = ['', 'sources', 'grants', 'grants?edit=notes-readers', 'preview', 'audit', 'access'];
    const more = ['issuers', 'admin-role-bindings', 'admin-role-bindings?edit=demo-admins', 'connected-apps'];
    for (const path of [...tenantPages, ...more]) {
      const response = await page.goto(`/admin/tenants/demo/${path}`);
      expect(response?.status(), path).toBe(200);
      await checkPage(page, `demo-${path.replace(/[^a-z]+/g, '-') || 'overview'}`);
    }
    const anonymous = await (await context()).newPage();
    for (const [path, status, name] of [
      ['/', 200, 'home'],
      ['/admin/', 200, 'index'],
      ['/admin/tenants/demo/sources', 401, 'signed-out'],
    ] as const) {
      const response = await anonymous.goto(path);
      expect(response?.status(), path).toBe(status);
      await checkPage(anonymous, name);
    }
    const { token } = await mintOperatorToken(built.config, {});
    const operator = await (await context({ extraHTTPHeaders: { authorization: `Bearer ${token}` } })).newPage();
    for (const [path, name] of [
      ['/admin/tenants', 'operator-tenants'],
      ['/admin/tenants/acme/', 'operator-acme-overview'],
      ['/admin/tenants/acme/sources', 'operator-acme-sources'],
    ] as const) {
      const response = await operator.goto(path);
      expect(response?.status(), path).toBe(200);
      await checkPage(operator, name);
    }
  });

  it('signs out', SLOW, async () => {
    await page.goto('/admin/tenants/demo/');
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign out' }).click()]);
    const response = await page.goto('/admin/tenants/demo/sources');
    expect(response?.status()).toBe(401);
  });
});

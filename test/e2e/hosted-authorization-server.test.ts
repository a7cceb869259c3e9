/**
 * End to end: a tenant whose hosted authorization server (docs/adr/0011)
 * signs users in at an Entra-like identity provider (no dynamic
 * registration, no RFC 8414 document, refuses `resource`). The official MCP
 * client registers dynamically (RFC 7591) and sends the user's browser, a
 * real headless Chromium, to authorize: the user signs in at the upstream,
 * consents on the gateway's page, and the client lists what the tenant's
 * grants allow the user's mapped groups. The gateway runs on its real store
 * (the control plane's database). A second tenant shows that nothing of the
 * first is accepted at its server.
 */
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import type { OAuthClientProvider } from '@modelcontextprotocol/client';
import type { Browser, Page } from 'playwright-core';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNoSeriousAxeViolations, launchChromium, newContext, saveScreenshots } from '@mcpgw/test-helpers/browser';
import { startEntraLikeProvider, type EntraLikeProvider } from '@mcpgw/test-helpers/entra-like-provider';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { type AuditEvent, readAuditLog } from '@mcpgw/test-helpers/audit-log';
import { startGateway, type StartedGateway } from '@mcpgw/test-helpers/gateway';
import { type LocalIssuer, startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { within } from '@mcpgw/test-helpers/within';

/**
 * Nothing listens there: the browser's request to it is seen and its URL
 * handed to the client, as a native client's loopback listener would take
 * it (RFC 8252 section 7.3). Not port 9, which Chromium refuses outright.
 */
const REDIRECT_URI = 'http://127.0.0.1:47809/oauth/callback';
const UPSTREAM_CLIENT = { clientId: 'mcp-gateway', clientSecret: 'an upstream client secret' };

type ClientInformation = Awaited<ReturnType<OAuthClientProvider['clientInformation']>>;
type Tokens = Awaited<ReturnType<OAuthClientProvider['tokens']>>;

/** The MCP client's OAuth provider, whose user agent is a Chromium page driven as a user would. */
class BrowserProvider implements OAuthClientProvider {
  callback: URL | undefined;
  consentShown = false;
  private client: ClientInformation;
  private saved: Tokens;
  private verifier = '';

  constructor(private readonly page: Page) {}

  get redirectUrl(): string {
    return REDIRECT_URI;
  }
  get clientMetadata() {
    return {
      client_name: 'Hosted AS e2e client',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation(): ClientInformation {
    return this.client;
  }
  saveClientInformation(information: NonNullable<ClientInformation>): void {
    this.client = information;
  }
  tokens(): Tokens {
    return this.saved;
  }
  saveTokens(tokens: NonNullable<Tokens>): void {
    this.saved = tokens;
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    return this.verifier;
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    const { page } = this;
    // Every hop of a redirect chain is a request of its own, this one included (nothing listens there).
    const caught = page
      .waitForRequest((request) => request.url().startsWith(`${REDIRECT_URI}?`), { timeout: 20_000 })
      .then((request) => new URL(request.url()));
    await page.goto(authorizationUrl.href);
    try {
      // The upstream's own sign-in page.
      await page.getByRole('button', { name: 'Sign in' }).click();
      // Back at the gateway: its consent page, checked as a person with assistive technology meets it.
      await page.getByRole('heading', { name: /Allow Hosted AS e2e client/ }).waitFor();
    } catch (error) {
      throw new Error(`the browser stopped at ${page.url()}: ${(await page.textContent('body'))?.slice(0, 600)}`, {
        cause: error,
      });
    }
    this.consentShown = true;
    await expectNoSeriousAxeViolations(page, 'the consent page after an upstream sign-in');
    await saveScreenshots(page, 'hosted-as-e2e-consent');
    await page.getByRole('button', { name: 'Allow' }).click();
    // The answer is the redirect back to the client.
    this.callback = await caught;
  }
}

function modernClient(): Client {
  return new Client(
    { name: 'mcpgw-e2e-hosted-as', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
}

let upstream: EntraLikeProvider;
let gateway: StartedGateway;
let browser: Browser;
/** The operators' identity provider: the audit log is read through the admin API as an operator. */
let operators: LocalIssuer;

const tenantEntry = (id: string) => ({
  id,
  name: id === 'acme' ? 'Acme Corp' : 'Beta Ltd',
  authorizationServer: {
    upstream: { issuer: upstream.issuer, ...UPSTREAM_CLIENT },
    claims: { groups: 'groups' },
  },
  auth: { issuers: [], requiredScopes: ['mcp:read'] },
  grants: [
    { name: 'engineers', match: { groups: ['engineering'] }, allow: [{ source: 'notes' }] },
    { name: 'finance', match: { groups: ['finance'] }, allow: [{ source: 'ledger' }] },
  ],
  sources: [
    { id: 'notes', type: 'static', resources: [{ uri: `test://${id}/notes/hello`, name: 'hello', text: 'hi' }] },
    { id: 'ledger', type: 'static', resources: [{ uri: `test://${id}/ledger/q3`, name: 'q3', text: '42' }] },
  ],
});

beforeAll(async () => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  upstream = await startEntraLikeProvider({
    interactive: true,
    clients: [
      {
        ...UPSTREAM_CLIENT,
        redirectUris: [`${base}/t/acme/oauth/callback`, `${base}/t/beta/oauth/callback`],
      },
    ],
    user: { subject: 'alice-pairwise-sub', name: 'Alice Example', email: 'alice@example.com', groups: ['engineering'] },
  });
  operators = await startLocalIssuer({ path: '/operators' });
  gateway = await startGateway({
    env: { PORT: String(port), OPERATOR_ISSUER: operators.issuer, OPERATOR_JWKS_URI: operators.jwksUri },
    bootstrap: { document: { tenants: [tenantEntry('acme'), tenantEntry('beta')] }, configDir: '.' },
    admin: {},
  });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await gateway?.close();
  await upstream?.close();
  await operators?.close();
});

/** An authorization request of `clientId` at the tenant's hosted server (PKCE S256, RFC 8707 `resource`). */
function authorizationUrl(tenantId: string, clientId: string, extra: Record<string, string> = {}): URL {
  const url = new URL(`${gateway.baseUrl}/t/${tenantId}/oauth/authorize`);
  for (const [name, value] of Object.entries({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    scope: 'mcp:read',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGPSWbjmGc',
    code_challenge_method: 'S256',
    resource: `${gateway.baseUrl}/t/${tenantId}/mcp`,
    ...extra,
  })) {
    url.searchParams.set(name, value);
  }
  return url;
}

/** The tenant's audit log as its operator reads it. */
const auditOf = (tenantId: string, action: string) => readAuditLog(gateway.baseUrl, operators, tenantId, { action });

describe('a hosted authorization server signing in at an Entra-like upstream', () => {
  let provider: BrowserProvider;

  it('takes the official MCP client through registration, the upstream sign-in and consent to listing resources', async () => {
    const context = await newContext(browser);
    try {
      provider = new BrowserProvider(await context.newPage());
      const endpoint = new URL('/t/acme/mcp', gateway.baseUrl);
      const first = modernClient();
      const transport = new StreamableHTTPClientTransport(endpoint, { authProvider: provider });
      await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
      await first.close();
      expect(provider.consentShown).toBe(true);
      const issuer = `${gateway.baseUrl}/t/acme/oauth`;
      expect(provider.callback?.searchParams.get('iss')).toBe(issuer);
      await transport.finishAuth(provider.callback?.searchParams ?? new URLSearchParams());

      // The token is the gateway's, for the user the upstream signed in, with the mapped claims.
      const claims = decodeJwt(provider.tokens()?.access_token ?? '');
      expect(claims).toMatchObject({
        iss: issuer,
        aud: endpoint.href,
        sub: 'alice-pairwise-sub',
        email: 'alice@example.com',
        name: 'Alice Example',
        groups: ['engineering'],
      });

      const second = modernClient();
      await second.connect(new StreamableHTTPClientTransport(endpoint, { authProvider: provider }));
      try {
        const { resources } = await second.listResources();
        // The grant of the mapped group `engineering`, not finance's.
        expect(resources.map((resource) => resource.uri).sort()).toEqual(['test://acme/notes/hello']);
      } finally {
        await second.close();
      }
    } finally {
      await context.close();
    }

    // The upstream saw only the gateway's own request: its client, its callback, no connector parameter.
    // (Its sign-in form posts back to its authorization endpoint: the GET and that POST.)
    expect(upstream.authorizationRequests.length).toBeGreaterThan(0);
    for (const asked of upstream.authorizationRequests) {
      expect(asked.get('client_id')).toBe(UPSTREAM_CLIENT.clientId);
      expect(asked.get('redirect_uri')).toBe(`${gateway.baseUrl}/t/acme/oauth/callback`);
      expect(asked.has('resource')).toBe(false);
    }
    expect(upstream.refusals).toEqual([]);
    expect(upstream.tokenRequests.every(({ params }) => !params.has('resource'))).toBe(true);
  }, 60_000);

  it("refuses tenant acme's client and token at tenant beta", async () => {
    const clientId = provider.clientInformation()?.client_id ?? '';
    expect(clientId).not.toBe('');
    // acme's registered client is unknown at beta's authorization endpoint (an error page, no redirect).
    const authorize = authorizationUrl('beta', clientId);
    const refused = await fetch(authorize, { redirect: 'manual' });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('location')).toBeNull();
    expect(await refused.text()).toContain('invalid_client');

    // acme's refresh token is not beta's to redeem.
    const refresh = await fetch(`${gateway.baseUrl}/t/beta/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: provider.tokens()?.refresh_token ?? '',
        client_id: clientId,
      }),
    });
    expect(refresh.status).toBe(401);
    expect(((await refresh.json()) as { error: string }).error).toBe('invalid_client');

    // acme's access token opens nothing at beta's MCP endpoint.
    const call = await fetch(`${gateway.baseUrl}/t/beta/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${provider.tokens()?.access_token ?? ''}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/list', params: {} }),
    });
    expect(call.status).toBe(401);
    expect(call.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it("records a sign-in the upstream refused in the tenant's audit log, with the client and no account", async () => {
    const registered = await fetch(`${gateway.baseUrl}/t/acme/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Refused e2e client',
        redirect_uris: [REDIRECT_URI],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      }),
    });
    expect(registered.status).toBe(201);
    const { client_id: clientId } = (await registered.json()) as { client_id: string };
    const authorize = authorizationUrl('acme', clientId, { state: 'refused-state' });

    const context = await newContext(browser);
    try {
      const page = await context.newPage();
      await page.goto(authorize.href);
      // At the upstream's own page the user cancels: it answers the gateway's callback with access_denied.
      const callback = page.waitForResponse(
        (response) => new URL(response.url()).pathname === '/t/acme/oauth/callback',
      );
      await page.getByRole('button', { name: 'Cancel' }).click();
      expect((await callback).status()).toBe(403);
      await page.getByRole('heading', { name: 'Your sign-in did not complete' }).waitFor();
    } finally {
      await context.close();
    }

    // The audit write never holds up the page: it lands shortly after.
    let refusals: AuditEvent[] = [];
    await within(
      10_000,
      async () => {
        refusals = (await auditOf('acme', 'refuse')).filter((event) => event.targetId === clientId);
        expect(refusals).toHaveLength(1);
      },
      'the refused sign-in in the audit log',
    );
    expect(refusals[0]).toMatchObject({
      actor: { kind: 'client', subject: clientId, clientId, issuer: `${gateway.baseUrl}/t/acme/oauth` },
      action: 'refuse',
      targetType: 'sign-in',
      after: { clientId, error: 'access_denied', reason: 'upstream_refused' },
    });
    // What the upstream said of itself stays in the gateway's log, never in the audit log.
    expect(JSON.stringify(refusals)).not.toContain('AADSTS65004');
    expect(await auditOf('beta', 'refuse')).toEqual([]);
  }, 60_000);
});

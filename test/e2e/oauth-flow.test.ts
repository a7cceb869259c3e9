/**
 * End to end: the official MCP client, with nothing but its
 * OAuth support and a callback catcher, meets the built-in demo tenant. It
 * starts from a 401, reads the protected resource metadata (RFC 9728) and the
 * metadata of the tenant's hosted authorization server with the demo login
 * (RFC 8414, docs/adr/0011), registers (RFC 7591), authorizes with PKCE S256
 * and a resource indicator (RFC 8707),
 * redeems the code, and lists the handbook. The "browser" is fetch following
 * redirects with a cookie jar, pressing the buttons a user would: "Continue
 * as the demo user" on the demo login, "Allow" on the consent page.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import type { OAuthClientProvider } from '@modelcontextprotocol/client';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintTenantToken } from '@mcpgw/gateway/testing';
import { startGateway, type StartedGateway } from '@mcpgw/test-helpers/gateway';
import { followToRedirectUri } from '@mcpgw/test-helpers/follow-redirects';
import { createRecordingFetch } from '@mcpgw/test-helpers/recording-fetch';

/** Never contacted: the test's "browser" stops at the redirect to it and hands its query to the client. */
const REDIRECT_URI = 'http://127.0.0.1:9/oauth/callback';

type ClientInformation = Awaited<ReturnType<OAuthClientProvider['clientInformation']>>;
type Tokens = Awaited<ReturnType<OAuthClientProvider['tokens']>>;
type DiscoveryState = Awaited<ReturnType<NonNullable<OAuthClientProvider['discoveryState']>>>;

/** An in-memory OAuthClientProvider whose user agent is fetch with a cookie jar. */
class CatchingProvider implements OAuthClientProvider {
  readonly authorizationUrls: URL[] = [];
  /** The titles of the pages the "user" answered, in order. */
  readonly pages: string[] = [];
  callback: URL | undefined;
  private client: ClientInformation;
  private saved: Tokens;
  private verifier = '';
  private expectedState = '';
  private discovery: DiscoveryState;

  get redirectUrl(): string {
    return REDIRECT_URI;
  }

  get clientMetadata() {
    return {
      client_name: 'mcpgw e2e OAuth client',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state(): string {
    this.expectedState = randomBytes(16).toString('base64url');
    return this.expectedState;
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

  // Kept beside the verifier so the SDK can bind the callback leg to the server it discovered.
  saveDiscoveryState(state: NonNullable<DiscoveryState>): void {
    this.discovery = state;
  }

  discoveryState(): DiscoveryState {
    return this.discovery;
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    this.authorizationUrls.push(authorizationUrl);
    this.callback = await followToRedirectUri(authorizationUrl, REDIRECT_URI, {
      onPage: ({ html }) => this.pages.push(/<title>([^<]*)<\/title>/.exec(html)?.[1] ?? ''),
    });
    // The SDK leaves `state` to the application (finishAuth docs).
    expect(this.callback.searchParams.get('state')).toBe(this.expectedState);
  }
}

function modernClient(): Client {
  return new Client(
    { name: 'mcpgw-e2e-oauth', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
}

let gateway: StartedGateway;
let endpoint: URL;

beforeAll(async () => {
  // No configuration: the built-in demo tenant, protected by its hosted authorization server (demo login).
  gateway = await startGateway();
  endpoint = new URL('/t/demo/mcp', gateway.baseUrl);
});

/** The gateway's base URL under another loopback name (it binds 127.0.0.1 with no PUBLIC_URL). */
function underName(name: string): string {
  const url = new URL(gateway.baseUrl);
  url.hostname = name;
  return url.origin;
}
afterAll(async () => {
  await gateway?.close();
});

describe('OAuth with the official MCP client against the demo tenant', () => {
  // A user may type either name for a loopback gateway; each must work on its own (RFC 9728 §3.3:
  // the metadata's `resource` is the URL the client used). The issuer stays on the canonical name.
  it.each(['127.0.0.1', 'localhost'])(
    'goes from a 401 through discovery, registration and PKCE authorization to listing resources at %s',
    async (name) => {
      const provider = new CatchingProvider();
      const recorder = createRecordingFetch();
      const issuer = `${gateway.baseUrl}/t/demo/oauth`;
      const base = underName(name);
      const endpoint = new URL('/t/demo/mcp', base);

      const first = modernClient();
      const transport = new StreamableHTTPClientTransport(endpoint, { authProvider: provider, fetch: recorder.fetch });
      await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
      await first.close();

      // 1. The gateway refused the bare request and said where its metadata is (RFC 9728 §5.1).
      const exchanges = recorder.exchanges;
      const refused = exchanges[0];
      expect(refused?.url).toBe(endpoint.href);
      expect(refused?.status).toBe(401);
      expect(refused?.responseHeaders['www-authenticate']).toContain(
        `resource_metadata="${base}/.well-known/oauth-protected-resource/t/demo/mcp"`,
      );
      // 2. The client read it and then the authorization server's metadata, registered, and was sent to authorize.
      const urls = exchanges.map((exchange) => `${exchange.method} ${exchange.url} ${exchange.status}`);
      expect(urls).toContain(`GET ${base}/.well-known/oauth-protected-resource/t/demo/mcp 200`);
      expect(urls).toContain(`GET ${gateway.baseUrl}/.well-known/oauth-authorization-server/t/demo/oauth 200`);
      expect(urls).toContain(`POST ${issuer}/register 201`);
      expect(provider.authorizationUrls).toHaveLength(1);
      const authorization = provider.authorizationUrls[0] as URL;
      expect(`${authorization.origin}${authorization.pathname}`).toBe(`${issuer}/authorize`);
      expect(authorization.searchParams.get('code_challenge_method')).toBe('S256');
      expect(authorization.searchParams.get('resource')).toBe(endpoint.href);
      expect(authorization.searchParams.get('scope')?.split(' ')).toContain('mcp:read');
      expect(authorization.searchParams.get('client_id')).toBe(provider.clientInformation()?.client_id);
      // The user signed in at the demo login and consented on the consent page, naming the client.
      expect(provider.pages).toEqual([
        expect.stringMatching(/^Sign in/),
        expect.stringMatching(/^Allow mcpgw e2e OAuth client\?/),
      ]);
      // The code came back with the issuer (RFC 9207), and its PKCE challenge is the verifier's hash.
      expect(provider.callback?.searchParams.get('iss')).toBe(issuer);
      expect(authorization.searchParams.get('code_challenge')).toBe(
        createHash('sha256').update(provider.codeVerifier()).digest('base64url'),
      );

      // 3. The application hands the callback to the transport, which redeems the code (with `resource`).
      await transport.finishAuth(provider.callback?.searchParams ?? new URLSearchParams());
      const tokenRequest = recorder.exchanges.find((exchange) => exchange.url === `${issuer}/token`);
      expect(tokenRequest?.status).toBe(200);
      expect(String(tokenRequest?.requestBody)).toContain(`resource=${encodeURIComponent(endpoint.href)}`);
      const accessToken = provider.tokens()?.access_token ?? '';
      const { payload, protectedHeader } = await jwtVerify(accessToken, createRemoteJWKSet(new URL(`${issuer}/jwks`)), {
        issuer,
        audience: endpoint.href,
        typ: 'at+jwt',
      });
      expect(protectedHeader.alg).toBe('RS256');
      expect(payload).toMatchObject({
        sub: 'demo-user',
        scope: 'mcp:read',
        client_id: provider.clientInformation()?.client_id,
        // The account's mapped claims (extraTokenClaims reading findAccount).
        name: 'Demo User',
        email: 'demo-user@example.invalid',
      });

      // 4. With the token, a fresh connection lists the handbook.
      const second = modernClient();
      await second.connect(new StreamableHTTPClientTransport(endpoint, { authProvider: provider }));
      try {
        const { resources } = await second.listResources();
        expect(resources.length).toBeGreaterThan(0);
        expect(resources.map((resource) => resource.name)).toEqual(
          expect.arrayContaining([expect.stringMatching(/working-hours|Working hours/i)]),
        );
      } finally {
        await second.close();
      }
    },
  );

  it('accepts a token from the token CLI and refuses it on a tenant it was not minted for', async () => {
    const { token, resource } = await mintTenantToken(gateway.config, { tenant: 'demo' });
    expect(resource).toBe(endpoint.href);
    const client = modernClient();
    await client.connect(
      new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    );
    try {
      const { resources } = await client.listResources();
      expect(resources.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }

    // The same key and issuer, another audience: the gateway must refuse it (RFC 8707 audience binding).
    const elsewhere = await mintTenantToken(
      { ...gateway.config, env: { ...gateway.config.env, PUBLIC_URL: 'http://127.0.0.1:1' } },
      { tenant: 'demo' },
    );
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: { authorization: `Bearer ${elsewhere.token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });
});

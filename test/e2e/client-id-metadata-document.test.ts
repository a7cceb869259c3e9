/**
 * End to end: the official MCP client identifies itself by a Client ID
 * Metadata Document (MCP authorization, "Client Registration"; the OAuth
 * draft "Client ID Metadata Document"): its `client_id` is the https URL of
 * its metadata, which the tenant's hosted authorization server fetches
 * through the gateway's egress guard, so the client never registers. The
 * document is served over https on loopback with a certificate made for the
 * test, trusted through the composition's test-only option (nothing in the
 * configuration can set it); EGRESS_ALLOW lets the fetch reach loopback, as
 * an operator would allow an internal host.
 */
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import type { OAuthClientProvider } from '@modelcontextprotocol/client';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followToRedirectUri } from '@mcpgw/test-helpers/follow-redirects';
import { startGateway, type StartedGateway } from '@mcpgw/test-helpers/gateway';
import {
  json,
  startDocumentServer,
  type DocumentServer,
} from '../../packages/authorization-server/test/clients/document-server.js';

const REDIRECT_URI = 'http://127.0.0.1:47811/oauth/callback';

type Tokens = Awaited<ReturnType<OAuthClientProvider['tokens']>>;
type ClientInformation = Awaited<ReturnType<OAuthClientProvider['clientInformation']>>;

/** An OAuthClientProvider with a metadata document URL and no registration; its browser is fetch answering like a user. */
class MetadataDocumentProvider implements OAuthClientProvider {
  callback: URL | undefined;
  private information: ClientInformation;
  private saved: Tokens;
  private verifier = '';

  constructor(readonly clientMetadataUrl: string) {}

  get redirectUrl(): string {
    return REDIRECT_URI;
  }
  get clientMetadata() {
    return {
      client_name: 'metadata document client',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation(): ClientInformation {
    return this.information;
  }
  saveClientInformation(information: NonNullable<ClientInformation>): void {
    this.information = information;
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
    this.callback = await followToRedirectUri(authorizationUrl, REDIRECT_URI);
  }
}

let documents: DocumentServer;
let gateway: StartedGateway;
let clientId: string;

beforeAll(async () => {
  documents = await startDocumentServer(['localhost']);
  clientId = `https://localhost:${documents.port}/mcp-client.json`;
  documents.route(
    '/mcp-client.json',
    json({
      client_id: clientId,
      client_name: 'metadata document client',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }),
  );
  gateway = await startGateway({
    env: { EGRESS_ALLOW: '127.0.0.1' },
    authorizationServer: { metadataDocumentCertificates: [documents.cert] },
  });
});

afterAll(async () => {
  await gateway?.close();
  await documents?.close();
});

describe('a client identified by its metadata document', () => {
  it('completes the flow with the official MCP client without registering', async () => {
    const metadata = (await (
      await fetch(`${gateway.baseUrl}/.well-known/oauth-authorization-server/t/demo/oauth`)
    ).json()) as Record<string, unknown>;
    expect(metadata.client_id_metadata_document_supported).toBe(true);

    const provider = new MetadataDocumentProvider(clientId);
    const endpoint = new URL('/t/demo/mcp', gateway.baseUrl);
    const first = new Client(
      { name: 'mcpgw-e2e-cimd', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    const transport = new StreamableHTTPClientTransport(endpoint, { authProvider: provider });
    await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    await first.close();
    await transport.finishAuth(provider.callback?.searchParams ?? new URLSearchParams());
    // Its client_id is the document's URL: a registration (RFC 7591) would have given it one of the server's.
    expect(provider.clientInformation()?.client_id).toBe(clientId);
    // The server read the document (over https, through the egress guard) instead of a registration.
    expect(documents.requests.get('/mcp-client.json')).toBeGreaterThan(0);
    expect(decodeJwt(provider.tokens()?.access_token ?? '')).toMatchObject({ client_id: clientId, sub: 'demo-user' });

    const second = new Client(
      { name: 'mcpgw-e2e-cimd', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await second.connect(new StreamableHTTPClientTransport(endpoint, { authProvider: provider }));
    try {
      const { resources } = await second.listResources();
      expect(resources.length).toBeGreaterThan(0);
    } finally {
      await second.close();
    }
  });
});

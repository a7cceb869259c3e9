/**
 * End to end: enterprise-managed authorization (the MCP extension of that
 * name) through the running gateway. An enterprise identity provider (a test
 * IdP on loopback) issues an Identity Assertion JWT Authorization Grant for
 * a client registered at the tenant's hosted authorization server; the
 * client exchanges it at the gateway's token endpoint (RFC 7523 JWT bearer
 * grant) and the official MCP client lists, with the token, what the
 * tenant's grants allow the asserted groups. The assertion is single use.
 */
import { randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type StartedGateway } from '@mcpgw/test-helpers/gateway';
import { startLocalIssuer, type LocalIssuer } from '@mcpgw/test-helpers/local-issuer';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

let idp: LocalIssuer;
let gateway: StartedGateway;
const issuer = () => `${gateway.baseUrl}/t/acme/oauth`;
const resource = () => `${gateway.baseUrl}/t/acme/mcp`;

beforeAll(async () => {
  idp = await startLocalIssuer({ path: '/enterprise' });
  gateway = await startGateway({
    bootstrap: {
      document: {
        tenants: [
          {
            id: 'acme',
            authorizationServer: {
              upstream: { demo: true },
              enterpriseManaged: { issuers: [{ issuer: idp.issuer, jwksUri: idp.jwksUri }] },
            },
            auth: { issuers: [], requiredScopes: ['mcp:read'] },
            grants: [
              { name: 'engineers', match: { groups: ['engineering'] }, allow: [{ source: 'notes' }] },
              { name: 'finance', match: { groups: ['finance'] }, allow: [{ source: 'ledger' }] },
            ],
            sources: [
              { id: 'notes', type: 'static', resources: [{ uri: 'test://acme/notes/a', name: 'a', text: 'a' }] },
              { id: 'ledger', type: 'static', resources: [{ uri: 'test://acme/ledger/b', name: 'b', text: 'b' }] },
            ],
          },
        ],
      },
      configDir: '.',
    },
  });
});

afterAll(async () => {
  await gateway?.close();
  await idp?.close();
});

/** A confidential client allowed the JWT bearer grant, registered as RFC 7591 says. */
async function registerConnector(): Promise<{ clientId: string; clientSecret: string }> {
  const response = await fetch(`${issuer()}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'enterprise connector',
      grant_types: [JWT_BEARER],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
    }),
  });
  const body = (await response.json()) as Record<string, unknown>;
  expect(response.status, JSON.stringify(body)).toBe(201);
  return { clientId: String(body.client_id), clientSecret: String(body.client_secret) };
}

function exchange(client: { clientId: string; clientSecret: string }, assertion: string) {
  return fetch(`${issuer()}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: JWT_BEARER, assertion }),
  });
}

describe('an identity assertion grant exchanged at the gateway', () => {
  it('is advertised in the metadata (the extension, section 6)', async () => {
    const response = await fetch(`${gateway.baseUrl}/.well-known/oauth-authorization-server/t/acme/oauth`);
    const metadata = (await response.json()) as Record<string, unknown>;
    expect(metadata.grant_types_supported).toContain(JWT_BEARER);
    expect(metadata.authorization_grant_profiles_supported).toEqual(['urn:ietf:params:oauth:grant-profile:id-jag']);
  });

  it("yields a token the tenant's MCP endpoint accepts, once", async () => {
    const client = await registerConnector();
    const now = Math.floor(Date.now() / 1000);
    const assertion = await idp.sign(
      {
        iss: idp.issuer,
        sub: 'ada-at-enterprise',
        aud: issuer(),
        client_id: client.clientId,
        resource: resource(),
        scope: 'mcp:read',
        jti: randomUUID(),
        iat: now,
        exp: now + 300,
        email: 'ada@acme.example',
        groups: ['engineering'],
      },
      { typ: 'oauth-id-jag+jwt' },
    );

    const answer = await exchange(client, assertion);
    const body = (await answer.json()) as Record<string, unknown>;
    expect(answer.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ token_type: 'Bearer', scope: 'mcp:read' });
    // No refresh token unless tokens.refreshTokensForAssertions (the extension's advice).
    expect(body.refresh_token).toBeUndefined();
    const accessToken = String(body.access_token);
    expect(decodeJwt(accessToken)).toMatchObject({
      iss: issuer(),
      aud: resource(),
      sub: 'ada-at-enterprise',
      client_id: client.clientId,
      groups: ['engineering'],
    });

    const mcp = new Client(
      { name: 'mcpgw-e2e-id-jag', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(resource()), {
        requestInit: { headers: { authorization: `Bearer ${accessToken}` } },
      }),
    );
    try {
      const { resources } = await mcp.listResources();
      expect(resources.map((each) => each.uri)).toEqual(['test://acme/notes/a']);
    } finally {
      await mcp.close();
    }

    // The same assertion again: refused, its jti spent (the extension, section 7.4.2).
    const replayed = await exchange(client, assertion);
    expect(replayed.status).toBe(400);
    expect(await replayed.json()).toMatchObject({ error: 'invalid_grant' });
  });
});

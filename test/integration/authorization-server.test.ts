/**
 * The tenants' hosted authorization servers (docs/adr/0011) through the real
 * gateway over HTTP: two tenants, `alpha` and `beta`, each with its own
 * oidc-provider at `/t/{tenant}/oauth` (the demo login, which consents
 * automatically). A "browser" is fetch following redirects with a cookie jar.
 * Each case is what a connector, or an attacker holding a code or token,
 * would see.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintTenantToken } from '@mcpgw/gateway/testing';
import { followToRedirectUri } from '@mcpgw/test-helpers/follow-redirects';
import { startGateway, type StartedGateway } from '@mcpgw/test-helpers/gateway';

const REDIRECT_URI = 'http://127.0.0.1:9/callback';
const SCOPE = 'mcp:read';

const tenant = (id: string) => ({
  id,
  auth: { issuers: [{ development: true }], requiredScopes: [SCOPE] },
  grants: [{ name: 'readers', match: { scopes: [SCOPE] }, allow: [{ source: 'notes' }] }],
  sources: [{ id: 'notes', type: 'static', resources: [{ uri: `test://${id}/hello`, name: 'hello', text: 'hi' }] }],
});

let gateway: StartedGateway;
const issuerOf = (id: string) => `${gateway.baseUrl}/t/${id}/oauth`;
const resourceOf = (id: string) => `${gateway.baseUrl}/t/${id}/mcp`;

beforeAll(async () => {
  gateway = await startGateway({
    bootstrap: { document: { tenants: [tenant('alpha'), tenant('beta')] }, configDir: '.' },
  });
});
afterAll(async () => {
  await gateway?.close();
});

async function json(url: string, init?: RequestInit): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, init);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function metadataOf(id: string): Promise<Record<string, unknown>> {
  const { status, body } = await json(`${gateway.baseUrl}/.well-known/oauth-authorization-server/t/${id}/oauth`);
  expect(status).toBe(200);
  return body;
}

/** RFC 7591 registration of a public client, as the MCP SDK registers. */
async function register(id: string): Promise<string> {
  const { status, body } = await json(`${issuerOf(id)}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      scope: `${SCOPE} offline_access`,
    }),
  });
  expect(status).toBe(201);
  return String(body.client_id);
}

function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** Runs the authorization request (RFC 6749 section 4.1.1, PKCE S256, RFC 8707 `resource`) to the redirect back. */
async function authorize(
  id: string,
  clientId: string,
  challenge: string,
  params: Record<string, string | undefined> = {},
): Promise<URL> {
  const url = new URL(`${issuerOf(id)}/authorize`);
  const all: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    scope: SCOPE,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: resourceOf(id),
    state: 'st',
    ...params,
  };
  for (const [key, value] of Object.entries(all)) if (value !== undefined) url.searchParams.set(key, value);
  return followToRedirectUri(url, REDIRECT_URI);
}

function token(id: string, form: Record<string, string | undefined>) {
  const body = new URLSearchParams();
  for (const [key, value] of Object.entries(form)) if (value !== undefined) body.set(key, value);
  return json(`${issuerOf(id)}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
}

async function codeFlow(id: string, clientId: string) {
  const { verifier, challenge } = pkce();
  const callback = await authorize(id, clientId, challenge);
  const code = callback.searchParams.get('code') ?? '';
  const redeemed = await token(id, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT_URI,
    client_id: clientId,
    code_verifier: verifier,
    resource: resourceOf(id),
  });
  return { callback, code, verifier, redeemed };
}

function mcpList(id: string, accessToken: string): Promise<Response> {
  return fetch(resourceOf(id), {
    method: 'POST',
    headers: {
      authorization: `Bearer ${accessToken}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/list', params: {} }),
  });
}

describe('a tenant’s hosted authorization server', () => {
  it('serves RFC 8414 metadata whose issuer is the path its well-known URL was built from', async () => {
    const metadata = await metadataOf('alpha');
    expect(metadata.issuer).toBe(issuerOf('alpha'));
    expect(metadata).toMatchObject({
      authorization_endpoint: `${issuerOf('alpha')}/authorize`,
      token_endpoint: `${issuerOf('alpha')}/token`,
      registration_endpoint: `${issuerOf('alpha')}/register`,
      revocation_endpoint: `${issuerOf('alpha')}/revoke`,
      jwks_uri: `${issuerOf('alpha')}/jwks`,
      code_challenge_methods_supported: ['S256'],
      response_types_supported: ['code'],
      authorization_response_iss_parameter_supported: true,
    });
    expect(metadata.scopes_supported).toEqual(expect.arrayContaining([SCOPE, 'offline_access', 'openid']));
    // The OpenID Connect discovery documents MCP clients also try: the same issuer.
    for (const url of [
      `${gateway.baseUrl}/.well-known/openid-configuration/t/alpha/oauth`,
      `${issuerOf('alpha')}/.well-known/openid-configuration`,
    ]) {
      expect((await json(url)).body.issuer).toBe(issuerOf('alpha'));
    }
    // Each tenant its own; an unknown tenant has none.
    expect((await metadataOf('beta')).issuer).toBe(issuerOf('beta'));
    expect((await json(`${gateway.baseUrl}/.well-known/oauth-authorization-server/t/nobody/oauth`)).status).toBe(404);
  });

  it('is named first in the protected resource metadata, and the 401 names the scope to request', async () => {
    const { body } = await json(`${gateway.baseUrl}/.well-known/oauth-protected-resource/t/alpha/mcp`);
    expect(body.authorization_servers).toEqual([issuerOf('alpha')]);
    expect(body.scopes_supported).toEqual([SCOPE]);
    const refused = await fetch(resourceOf('alpha'), { method: 'POST', body: '{}' });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain(`scope="${SCOPE}"`);
  });

  it('completes the code flow with PKCE: a JWT access token for the resource, iss in the response (RFC 9207)', async () => {
    const clientId = await register('alpha');
    const { callback, redeemed } = await codeFlow('alpha', clientId);
    expect(callback.searchParams.get('iss')).toBe(issuerOf('alpha'));
    expect(callback.searchParams.get('state')).toBe('st');
    expect(redeemed.status).toBe(200);
    expect(redeemed.body).toMatchObject({ token_type: 'Bearer', scope: SCOPE });
    expect(typeof redeemed.body.refresh_token).toBe('string');
    const jwks = (await json(`${issuerOf('alpha')}/jwks`)).body;
    const { payload, protectedHeader } = await jwtVerify(
      String(redeemed.body.access_token),
      createLocalJWKSet(jwks as never),
      {
        issuer: issuerOf('alpha'),
        audience: resourceOf('alpha'),
        typ: 'at+jwt',
      },
    );
    expect(protectedHeader.alg).toBe('RS256');
    expect(payload).toMatchObject({ sub: 'demo-user', client_id: clientId, scope: SCOPE, name: 'Demo User' });
    // The default lifetime of authorizationServer.tokens.accessTokenSeconds.
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(900);
    expect((await mcpList('alpha', String(redeemed.body.access_token))).status).toBe(200);
  });

  it('refuses a code redeemed with the wrong PKCE verifier', async () => {
    const clientId = await register('alpha');
    const { challenge } = pkce();
    const callback = await authorize('alpha', clientId, challenge);
    const refused = await token('alpha', {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code') ?? '',
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: pkce().verifier,
      resource: resourceOf('alpha'),
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_grant');
  });

  it('refuses an authorization request without PKCE', async () => {
    const clientId = await register('alpha');
    const callback = await authorize('alpha', clientId, '', {
      code_challenge: undefined,
      code_challenge_method: undefined,
    });
    expect(callback.searchParams.get('error')).toBe('invalid_request');
  });

  it('refuses a replayed code and revokes the grant it made (its refresh token stops working)', async () => {
    const clientId = await register('alpha');
    const { code, verifier, redeemed } = await codeFlow('alpha', clientId);
    expect(redeemed.status).toBe(200);
    const replay = await token('alpha', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: verifier,
      resource: resourceOf('alpha'),
    });
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    const refresh = await token('alpha', {
      grant_type: 'refresh_token',
      refresh_token: String(redeemed.body.refresh_token),
      client_id: clientId,
    });
    expect(refresh.body.error).toBe('invalid_grant');
  });

  it('refuses any resource but its own, and a missing one (invalid_target)', async () => {
    const clientId = await register('alpha');
    const { challenge } = pkce();
    for (const resource of [resourceOf('beta'), 'https://elsewhere.example/mcp', undefined]) {
      const callback = await authorize('alpha', clientId, challenge, { resource });
      expect(callback.searchParams.get('error'), String(resource)).toBe('invalid_target');
      expect(callback.searchParams.get('code')).toBeNull();
    }
  });

  it('rotates the refresh token on every use, and a reused one revokes the whole chain', async () => {
    const clientId = await register('alpha');
    const { redeemed } = await codeFlow('alpha', clientId);
    const first = String(redeemed.body.refresh_token);
    const rotated = await token('alpha', { grant_type: 'refresh_token', refresh_token: first, client_id: clientId });
    expect(rotated.status).toBe(200);
    const second = String(rotated.body.refresh_token);
    expect(second).not.toBe(first);
    // The renewed access token keeps the granted audience.
    expect(decodeJwt(String(rotated.body.access_token)).aud).toBe(resourceOf('alpha'));

    // An attacker replays the first one: refused, and the grant (with the second token) is gone.
    const reused = await token('alpha', { grant_type: 'refresh_token', refresh_token: first, client_id: clientId });
    expect(reused.body.error).toBe('invalid_grant');
    const legit = await token('alpha', { grant_type: 'refresh_token', refresh_token: second, client_id: clientId });
    expect(legit.body.error).toBe('invalid_grant');
  });

  it('revokes a refresh token (RFC 7009)', async () => {
    const clientId = await register('alpha');
    const { redeemed } = await codeFlow('alpha', clientId);
    const refreshToken = String(redeemed.body.refresh_token);
    const revoked = await fetch(`${issuerOf('alpha')}/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: refreshToken, token_type_hint: 'refresh_token', client_id: clientId }),
    });
    expect(revoked.status).toBe(200);
    const after = await token('alpha', {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: clientId,
    });
    expect(after.body.error).toBe('invalid_grant');
  });

  it("refuses tenant A's client at tenant B's server, and A's token at B's MCP endpoint", async () => {
    const alphaClient = await register('alpha');
    const { challenge } = pkce();
    const atBeta = await fetch(
      `${issuerOf('beta')}/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: alphaClient,
        redirect_uri: REDIRECT_URI,
        scope: SCOPE,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        resource: resourceOf('beta'),
      })}`,
      { redirect: 'manual' },
    );
    // An unknown client is never redirected to (RFC 6749 section 4.1.2.1): the error is shown here.
    expect(atBeta.status).toBe(400);
    expect(atBeta.headers.get('location')).toBeNull();
    expect(await atBeta.text()).toContain('invalid_client');

    const { redeemed } = await codeFlow('alpha', alphaClient);
    const alphaToken = String(redeemed.body.access_token);
    const refused = await mcpList('beta', alphaToken);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    // Nor does B's token endpoint take A's refresh token.
    const refresh = await token('beta', {
      grant_type: 'refresh_token',
      refresh_token: String(redeemed.body.refresh_token),
      client_id: alphaClient,
    });
    expect(refresh.body.error).toBe('invalid_client');
  });

  it('answers 403 insufficient_scope naming the scope a token lacks', async () => {
    // Signed with alpha's own key, as its token endpoint signs, but without the scope alpha requires.
    const { token: scopeless } = await mintTenantToken(gateway.config, { tenant: 'alpha', scope: 'other' });
    const refused = await mcpList('alpha', scopeless);
    expect(refused.status).toBe(403);
    const challengeHeader = refused.headers.get('www-authenticate') ?? '';
    expect(challengeHeader).toContain('error="insufficient_scope"');
    expect(challengeHeader).toContain(`scope="${SCOPE}"`);
    expect(challengeHeader).toContain('resource_metadata=');
  });
});

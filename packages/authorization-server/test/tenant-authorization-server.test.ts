import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import type { JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDevAuthorizationServer } from '../src/create-dev-authorization-server.js';
import { mintDevAccessToken } from '../src/mint-dev-access-token.js';
import {
  REDIRECT_URI,
  fetchJson,
  followToRedirectUri,
  pkcePair,
  recordingLogger,
  registerClient,
  startDevServer,
} from './oauth-client.js';
import type { RunningServer } from './oauth-client.js';

const SCOPE = 'resources:read';

let dir: string;
let running: RunningServer;
let demoResource: string;
let metadata: Record<string, unknown>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dev-idp-'));
});
afterAll(async () => {
  await running?.close();
  await rm(dir, { recursive: true, force: true });
});

async function verify(token: string, server = running) {
  return jwtVerify(token, createLocalJWKSet(server.server.publicJwks as never), {
    issuer: server.issuer,
    audience: demoResource,
    typ: 'at+jwt',
    algorithms: ['RS256'],
  });
}

/**
 * An authorization request URL (RFC 6749 section 4.1.1, with PKCE S256 per
 * RFC 7636 and an RFC 8707 resource) for the demo resource; `params` adds or
 * replaces parameters, and an undefined one is left out.
 */
function authorizationRequest(
  clientId: string,
  challenge: string,
  params: Record<string, string | undefined> = {},
  endpoint = String(metadata.authorization_endpoint),
): URL {
  const all: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    scope: SCOPE,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: demoResource,
    ...params,
  };
  const url = new URL(endpoint);
  url.search = new URLSearchParams(
    Object.entries(all).filter((entry): entry is [string, string] => entry[1] !== undefined),
  ).toString();
  return url;
}

/** The token request that redeems `code` (RFC 6749 section 4.1.3, with the PKCE verifier and the resource). */
function redeemCode(clientId: string, code: string, verifier: string, resource = demoResource) {
  return fetchJson(String(metadata.token_endpoint), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: verifier,
      resource,
    }),
  });
}

/** Authorization request + token request, as an MCP client makes them (MCP authorization, "Authorization Flow Steps"). */
async function obtainTokens(clientId: string, resource: string, scope: string) {
  const { verifier, challenge } = pkcePair();
  const callback = await followToRedirectUri(
    authorizationRequest(clientId, challenge, { scope, state: 'state-123', resource }),
  );
  const code = callback.searchParams.get('code');
  if (code === null) throw new Error(`no code: ${callback.href}`);
  expect(callback.searchParams.get('state')).toBe('state-123');
  // RFC 9207: the response names its issuer, and the metadata says it will.
  expect(callback.searchParams.get('iss')).toBe(running.issuer);
  return redeemCode(clientId, code, verifier, resource);
}

describe('development authorization server', () => {
  // First, so that it sees oidc-provider's import-time notices too.
  it('starts and serves discovery without printing anything on the console', async () => {
    const spies = (['log', 'info', 'warn', 'error', 'debug'] as const).map((method) =>
      vi.spyOn(console, method).mockImplementation(() => undefined),
    );
    try {
      running = await startDevServer({
        keystorePath: join(dir, 'keys.json'),
        resources: (origin) => [
          { uri: `${origin}/t/demo/mcp`, scopes: [SCOPE, 'admin'] },
          { uri: `${origin}/t/other/mcp`, scopes: [SCOPE] },
        ],
      });
      demoResource = `${running.origin}/t/demo/mcp`;
      const { status, body } = await fetchJson(`${running.origin}/.well-known/oauth-authorization-server/dev-idp`);
      expect(status).toBe(200);
      metadata = body;
      for (const spy of spies) expect(spy.mock.calls).toEqual([]);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });

  it('publishes the same RFC 8414 / OpenID metadata at every path MCP clients try', async () => {
    const issuer = running.issuer;
    expect(issuer).toBe(`${running.origin}/dev-idp`);
    expect(metadata).toMatchObject({
      issuer,
      authorization_endpoint: `${issuer}/auth`,
      token_endpoint: `${issuer}/token`,
      registration_endpoint: `${issuer}/reg`,
      jwks_uri: `${issuer}/jwks`,
      code_challenge_methods_supported: ['S256'],
      response_types_supported: ['code'],
      // Clients register the scopes they will request; the resources' scopes are known ones.
      scopes_supported: expect.arrayContaining([SCOPE, 'admin', 'openid', 'offline_access']),
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
    });
    expect(metadata.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token']));
    for (const path of [
      '/.well-known/openid-configuration/dev-idp',
      '/dev-idp/.well-known/openid-configuration',
      '/dev-idp/.well-known/oauth-authorization-server',
    ]) {
      const { status, body } = await fetchJson(`${running.origin}${path}`);
      expect(status, path).toBe(200);
      expect(body, path).toEqual(metadata);
    }
    // The host's view of the request is left as it came (access logs print it).
    expect(running.finishedUrls.slice(-3)).toEqual([
      '/.well-known/openid-configuration/dev-idp',
      '/dev-idp/.well-known/openid-configuration',
      '/dev-idp/.well-known/oauth-authorization-server',
    ]);
    const jwks = await fetchJson(`${issuer}/jwks`);
    expect(jwks.body).toEqual(running.server.publicJwks);
    expect((await fetch(`${running.origin}/elsewhere`)).status).toBe(404);
  });

  it('runs the authorization code flow with PKCE and a resource indicator to an audience-bound JWT access token', async () => {
    const clientId = await registerClient({}, String(metadata.registration_endpoint));
    const { status, body } = await obtainTokens(clientId, demoResource, `${SCOPE} offline_access`);
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.token_type).toBe('Bearer');
    // The response's scope is the token's: the resource's scopes (offline_access bought the refresh token).
    expect(body.scope).toBe(SCOPE);

    const { payload, protectedHeader } = await verify(String(body.access_token));
    expect(protectedHeader).toMatchObject({ alg: 'RS256', typ: 'at+jwt', kid: expect.any(String) });
    expect(payload).toMatchObject({
      iss: running.issuer,
      aud: demoResource,
      sub: 'demo-user',
      scope: SCOPE,
      client_id: clientId,
    });
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(3600);

    // A refresh without `resource` keeps the audience (and scope) the code was granted for.
    expect(typeof body.refresh_token).toBe('string');
    const refreshed = await fetchJson(String(metadata.token_endpoint), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: String(body.refresh_token),
        client_id: clientId,
      }),
    });
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    const again = await verify(String(refreshed.body.access_token));
    expect(again.payload).toMatchObject({ aud: demoResource, scope: SCOPE, sub: 'demo-user' });
    expect(running.logger.entries.filter((entry) => entry.level === 'error')).toEqual([]);
  });

  it('grants only the scopes configured for the resource', async () => {
    const clientId = await registerClient({ scope: `${SCOPE} admin` }, String(metadata.registration_endpoint));
    const other = `${running.origin}/t/other/mcp`;
    const { status, body } = await obtainTokens(clientId, other, `${SCOPE} admin`);
    expect(status, JSON.stringify(body)).toBe(200);
    const { payload } = await jwtVerify(
      String(body.access_token),
      createLocalJWKSet(running.server.publicJwks as never),
      {
        issuer: running.issuer,
        audience: other,
      },
    );
    expect(payload.scope).toBe(SCOPE);
  });

  it('refuses a resource it was not configured for (RFC 8707 invalid_target)', async () => {
    const clientId = await registerClient({}, String(metadata.registration_endpoint));
    const { challenge } = pkcePair();
    const url = authorizationRequest(clientId, challenge, { resource: `${running.origin}/t/unknown/mcp` });
    const callback = await followToRedirectUri(url);
    expect(callback.searchParams.get('error')).toBe('invalid_target');
    expect(callback.searchParams.get('code')).toBeNull();
  });

  it('requires PKCE with S256', async () => {
    const clientId = await registerClient({}, String(metadata.registration_endpoint));
    const { verifier, challenge } = pkcePair();
    const variants: Array<Record<string, string | undefined>> = [
      { code_challenge: undefined, code_challenge_method: undefined },
      { code_challenge: verifier, code_challenge_method: 'plain' },
    ];
    for (const extra of variants) {
      const callback = await followToRedirectUri(authorizationRequest(clientId, challenge, extra));
      expect(callback.searchParams.get('error'), JSON.stringify(extra)).toBe('invalid_request');
      expect(callback.searchParams.get('code')).toBeNull();
    }
  });

  it('refuses a code exchanged with the wrong verifier', async () => {
    const clientId = await registerClient({}, String(metadata.registration_endpoint));
    const { challenge } = pkcePair();
    const code = (await followToRedirectUri(authorizationRequest(clientId, challenge))).searchParams.get('code') ?? '';
    const { status, body } = await redeemCode(clientId, code, pkcePair().verifier);
    expect(status).toBe(400);
    expect(body.error).toBe('invalid_grant');
  });

  it('refuses to start on an issuer that is not loopback', async () => {
    for (const issuer of [
      'http://example.com/dev-idp',
      'http://0.0.0.0:8080/dev-idp',
      'http://10.1.2.3:8080/dev-idp',
      'https://127.0.0.1.nip.io/dev-idp',
    ]) {
      await expect(
        createDevAuthorizationServer({
          issuer,
          keystorePath: join(dir, 'refused.json'),
          resources: [],
          logger: recordingLogger(),
        }),
        issuer,
      ).rejects.toThrow(/loopback/);
    }
    // Nothing was written for a server that did not start.
    await expect(stat(join(dir, 'refused.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('creates the keystore once (mode 0600, private) and reuses it, so tokens survive a restart', async () => {
    const keystorePath = join(dir, 'keys.json');
    const info = await stat(keystorePath);
    expect(info.mode & 0o777).toBe(0o600);
    const before = await readFile(keystorePath, 'utf8');
    const stored = JSON.parse(before) as { keys: Array<Record<string, unknown>> };
    expect(stored.keys).toHaveLength(1);
    expect(stored.keys[0]).toHaveProperty('d');
    for (const key of running.server.publicJwks.keys) {
      for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(key).not.toHaveProperty(member);
    }

    const clientId = await registerClient({}, String(metadata.registration_endpoint));
    const { body } = await obtainTokens(clientId, demoResource, SCOPE);
    const restarted = await startDevServer({
      keystorePath,
      resources: (origin) => [{ uri: `${origin}/t/demo/mcp`, scopes: [SCOPE] }],
    });
    try {
      expect(await readFile(keystorePath, 'utf8')).toBe(before);
      expect(restarted.server.publicJwks).toEqual(running.server.publicJwks);
      // The first server's token verifies with the restarted server's keys.
      const { payload } = await jwtVerify(
        String(body.access_token),
        createLocalJWKSet(restarted.server.publicJwks as never),
      );
      expect(payload.sub).toBe('demo-user');
    } finally {
      await restarted.close();
    }
  });

  it('remembers registered clients across a restart', async () => {
    const keystorePath = join(dir, 'restart', 'keys.json');
    const resources = (origin: string) => [{ uri: `${origin}/t/demo/mcp`, scopes: [SCOPE] }];
    const first = await startDevServer({ keystorePath, resources });
    const registration = (await fetchJson(`${first.issuer}/.well-known/openid-configuration`)).body
      .registration_endpoint;
    const clientId = await registerClient({}, String(registration));
    await first.close();

    const second = await startDevServer({ keystorePath, resources });
    try {
      const { challenge } = pkcePair();
      const url = authorizationRequest(
        clientId,
        challenge,
        { resource: `${second.origin}/t/demo/mcp` },
        `${second.issuer}/auth`,
      );
      const callback = await followToRedirectUri(url);
      expect(callback.searchParams.get('code')).toEqual(expect.any(String));
      expect((await stat(join(dir, 'restart', 'clients.jsonl'))).mode & 0o777).toBe(0o600);
    } finally {
      await second.close();
    }
  });

  it.each([
    ['http on another host', 'http://app.example/callback'],
    ['a private-use scheme', 'com.example.app:/callback'],
    ['javascript:', 'javascript:alert(1)'],
    ['a fragment', 'https://app.example/callback#x'],
  ])('refuses to register a redirect URI with %s (RFC 7591 invalid_redirect_uri)', async (_name, uri) => {
    const { status, body } = await fetchJson(String(metadata.registration_endpoint), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [REDIRECT_URI, uri], token_endpoint_auth_method: 'none' }),
    });
    expect(status).toBe(400);
    expect(body.error).toBe('invalid_redirect_uri');
  });

  it('registers loopback http and https redirect URIs (RFC 8252 §7.3)', async () => {
    for (const uri of [
      'http://127.0.0.1:9/callback',
      'http://localhost:6274/oauth/callback',
      'http://[::1]:9/callback',
      'https://app.example/callback',
    ]) {
      await expect(
        registerClient({ redirect_uris: [uri] }, String(metadata.registration_endpoint)),
        uri,
      ).resolves.toEqual(expect.any(String));
    }
  });

  it('mints CLI tokens with the same header and claims as its token endpoint', async () => {
    const clientId = await registerClient({}, String(metadata.registration_endpoint));
    const fromServer = await verify(String((await obtainTokens(clientId, demoResource, SCOPE)).body.access_token));

    const minted = await mintDevAccessToken({
      issuer: running.issuer,
      keystorePath: join(dir, 'keys.json'),
      resource: demoResource,
      scope: `${SCOPE}  admin`,
    });
    const { payload, protectedHeader } = await verify(minted);
    expect(decodeProtectedHeader(minted)).toEqual(protectedHeader);
    expect(Object.keys(protectedHeader).sort()).toEqual(Object.keys(fromServer.protectedHeader).sort());
    expect(protectedHeader.kid).toBe(fromServer.protectedHeader.kid);
    expect(Object.keys(payload).sort()).toEqual(Object.keys(fromServer.payload).sort());
    expect(payload).toMatchObject<JWTPayload>({
      iss: running.issuer,
      aud: demoResource,
      sub: 'demo-user',
      scope: `${SCOPE} admin`,
      client_id: 'dev-token-cli',
    });
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(3600);

    const custom = await verify(
      await mintDevAccessToken({
        issuer: running.issuer,
        keystorePath: join(dir, 'keys.json'),
        resource: demoResource,
        scope: SCOPE,
        subject: 'alice',
        clientId: 'my-client',
        ttlSeconds: 60,
      }),
    );
    expect(custom.payload).toMatchObject({ sub: 'alice', client_id: 'my-client' });
    expect((custom.payload.exp ?? 0) - (custom.payload.iat ?? 0)).toBe(60);
  });

  it('lets the token CLI sign before any server ran (creates the keystore)', async () => {
    const keystorePath = join(dir, 'cli-first', 'keys.json');
    const token = await mintDevAccessToken({
      issuer: 'http://127.0.0.1:8080/dev-idp',
      keystorePath,
      resource: 'http://127.0.0.1:8080/t/demo/mcp',
      scope: '',
    });
    const server = await startDevServer({ keystorePath, resources: () => [] });
    try {
      const { payload } = await jwtVerify(token, createLocalJWKSet(server.server.publicJwks as never), {
        issuer: 'http://127.0.0.1:8080/dev-idp',
        audience: 'http://127.0.0.1:8080/t/demo/mcp',
        typ: 'at+jwt',
      });
      expect(payload.scope).toBeUndefined();
    } finally {
      await server.close();
    }
  });
});

/**
 * Dynamic client registration (RFC 7591) at a real oidc-provider with the
 * clients policy: the switch, the cap, public clients only, the redirect URI
 * rules, and the loopback port leeway of RFC 8252 section 7.3 at
 * authorization.
 */
import { followToRedirectUri } from '@mcpgw/test-helpers/follow-redirects';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorize, clientPolicy, pkcePair, register, startProvider, type RunningProvider } from './harness.js';

let running: RunningProvider;
/** The provider's clock: the use of a client is recorded at this instant. */
const USED_AT = Date.parse('2031-05-06T07:08:09Z');

beforeAll(async () => {
  running = await startProvider(clientPolicy({ registration: { maxClients: 50 } }), { now: () => USED_AT });
});
afterAll(async () => {
  await running?.close();
});

async function registered(metadata: Record<string, unknown>): Promise<string> {
  const result = await register(running, metadata);
  expect(result.status, JSON.stringify(result.body)).toBe(201);
  return String(result.body?.client_id);
}

async function expectRefusedRegistration(metadata: Record<string, unknown>, error: string, description: RegExp) {
  const before = await running.registeredClients.count();
  const result = await register(running, metadata);
  expect(result.status).toBe(400);
  expect(result.body).toMatchObject({ error });
  expect(String(result.body?.error_description)).toMatch(description);
  // Bad input changes nothing.
  expect(await running.registeredClients.count()).toBe(before);
}

describe('registration enabled', () => {
  it('registers a public client: no secret, authorization_code and refresh_token, advertised in the metadata', async () => {
    const result = await register(running, { redirect_uris: ['https://app.example.com/callback'], client_name: 'App' });
    expect(result.status).toBe(201);
    expect(result.body).toMatchObject({
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
    expect(result.body).not.toHaveProperty('client_secret');
    expect(result.body).not.toHaveProperty('registration_access_token');
    const metadata = (await (await fetch(`${running.issuer}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    expect(metadata.registration_endpoint).toBe(`${running.issuer}/reg`);
  });

  it('refuses a public client with a secret-based authentication method', async () => {
    await expectRefusedRegistration(
      { redirect_uris: ['https://app.example.com/callback'], token_endpoint_auth_method: 'client_secret_basic' },
      'invalid_client_metadata',
      /token_endpoint_auth_method must be "none", not "client_secret_basic"/,
    );
  });

  it('refuses grant types other than authorization_code and refresh_token', async () => {
    await expectRefusedRegistration(
      {
        redirect_uris: ['https://app.example.com/callback'],
        grant_types: ['authorization_code', 'client_credentials'],
      },
      'invalid_client_metadata',
      /grant_types may contain only authorization_code, refresh_token, not "client_credentials"/,
    );
  });

  it('refuses metadata that would make the server fetch a URL of the registrant', async () => {
    await expectRefusedRegistration(
      { redirect_uris: ['https://app.example.com/callback'], sector_identifier_uri: 'https://app.example.com/sector' },
      'invalid_client_metadata',
      /sector_identifier_uri is not supported/,
    );
  });

  it.each([
    ['a fragment', 'https://app.example.com/callback#done', /must not have a fragment/],
    ['plain http off loopback', 'http://app.example.com/callback', /http is accepted only on a loopback address/],
    ['a wildcard', 'https://*.example.com/callback', /must not have a wildcard/],
    [
      'a private-use scheme for a web client',
      'com.example.app:/callback',
      /private-use URI scheme is accepted only for/,
    ],
    ['a javascript: URI', 'javascript:alert(1)', /must not use the javascript scheme/],
  ])('refuses a redirect URI with %s', async (_case, uri, description) => {
    await expectRefusedRegistration({ redirect_uris: [uri] }, 'invalid_redirect_uri', description);
  });

  it('accepts a private-use scheme for a native client (RFC 8252 section 7.1)', async () => {
    await registered({ application_type: 'native', redirect_uris: ['com.example.app:/oauth/callback'] });
  });
});

describe('redirect URI matching at authorization', () => {
  it('lets a redirect to 127.0.0.1 or [::1] use any port, and only the port (RFC 8252 section 7.3)', async () => {
    const clientId = await registered({ redirect_uris: ['http://127.0.0.1/callback', 'http://[::1]/callback'] });
    expect((await authorize(running, clientId, 'http://127.0.0.1:53127/callback')).status).toBe(303);
    expect((await authorize(running, clientId, 'http://[::1]:40001/callback')).status).toBe(303);
    for (const uri of [
      'http://127.0.0.1:53127/other',
      'http://127.0.0.1:53127/callback?x=1',
      'http://127.0.0.2:53127/callback',
    ]) {
      const refused = await authorize(running, clientId, uri);
      expect(refused.status, uri).toBe(400);
      expect(refused.body).toMatchObject({ error: 'invalid_redirect_uri' });
    }
  });

  it('matches localhost and every other host exactly, port included', async () => {
    const clientId = await registered({
      redirect_uris: ['http://localhost:6274/callback', 'https://app.example.com/callback'],
    });
    expect((await authorize(running, clientId, 'http://localhost:6274/callback')).status).toBe(303);
    for (const uri of ['http://localhost:6275/callback', 'https://app.example.com:8443/callback']) {
      const refused = await authorize(running, clientId, uri);
      expect(refused.status, uri).toBe(400);
      expect(refused.body).toMatchObject({ error: 'invalid_redirect_uri' });
    }
  });

  it('completes the flow on a varied loopback port, and records the use of the client', async () => {
    const clientId = await registered({ redirect_uris: ['http://127.0.0.1/callback'] });
    const redirectUri = 'http://127.0.0.1:49152/callback';
    const { verifier, challenge } = pkcePair();
    const start = new URL(`${running.issuer}/auth`);
    start.search = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: 'openid',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString();
    const back = await followToRedirectUri(start, redirectUri);
    const code = back.searchParams.get('code');
    expect(code, back.href).toBeTruthy();
    const token = await fetch(`${running.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: code!,
        redirect_uri: redirectUri,
        client_id: clientId,
        code_verifier: verifier,
      }),
    });
    expect(token.status).toBe(200);
    // The authorization and the token request touched its lastUsedAt (with the provider's clock).
    expect(running.registeredClients.used.get(clientId)?.getTime()).toBe(USED_AT);
  });

  it('requires PKCE of every client', async () => {
    const clientId = await registered({ redirect_uris: ['https://app.example.com/callback'] });
    const url = new URL(`${running.issuer}/auth`);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: 'https://app.example.com/callback',
      scope: 'openid',
    }).toString();
    const response = await fetch(url, { redirect: 'manual' });
    const location = new URL(String(response.headers.get('location')));
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toMatch(/PKCE/);
  });
});

describe('registration policy', () => {
  it('disabled: no registration_endpoint advertised, and the endpoint is not found', async () => {
    const closed = await startProvider(clientPolicy({ registration: { enabled: false } }));
    try {
      const metadata = (await (await fetch(`${closed.issuer}/.well-known/openid-configuration`)).json()) as Record<
        string,
        unknown
      >;
      expect(metadata).not.toHaveProperty('registration_endpoint');
      const result = await register(closed, { redirect_uris: ['https://app.example.com/callback'] });
      expect(result.status).toBe(404);
    } finally {
      await closed.close();
    }
  });

  it('refuses a registration past the cap, with a clear error, and stores nothing', async () => {
    const capped = await startProvider(clientPolicy({ registration: { maxClients: 2 } }));
    try {
      const metadata = { redirect_uris: ['https://app.example.com/callback'] };
      expect((await register(capped, metadata)).status).toBe(201);
      expect((await register(capped, metadata)).status).toBe(201);
      const refused = await register(capped, metadata);
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ error: 'access_denied' });
      expect(String(refused.body?.error_description)).toMatch(/reached its limit of 2 registered clients/);
      expect(await capped.registeredClients.count()).toBe(2);
    } finally {
      await capped.close();
    }
  });
});

/**
 * End to end, on two gateway replicas of one deployment (one Postgres
 * control plane, one Redis, one SECRETS_KEY, one PUBLIC_URL): an operator
 * creates a tenant with a hosted authorization server through the admin
 * API, and it works at once on both replicas, its metadata served and the
 * whole sign-in flow completed with every step sent to the other replica
 * (registration, authorization, the upstream's callback, consent, the code,
 * refreshes): any replica serves any step. A change of its settings
 * (`tokens.accessTokenSeconds`) takes effect on the replica that did not
 * take the write.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintOperatorToken } from '@mcpgw/gateway/testing';
import { startEntraLikeProvider, type EntraLikeProvider } from '@mcpgw/test-helpers/entra-like-provider';
import { followToRedirectUri } from '@mcpgw/test-helpers/follow-redirects';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { startGateway, type StartedGateway } from '@mcpgw/test-helpers/gateway';
import { createTestDatabase, type TestDatabase } from '@mcpgw/test-helpers/postgres';
import { redisUrl, requireRedis } from '@mcpgw/test-helpers/redis';
import { within } from '@mcpgw/test-helpers/within';

const SECRET = 'a replicas test server secret of at least thirty-two characters';
const UPSTREAM_CLIENT = { clientId: 'mcp-gateway', clientSecret: 'an upstream client secret' };
const REDIRECT_URI = 'http://127.0.0.1:47810/oauth/callback';

let database: TestDatabase;
let upstream: EntraLikeProvider;
let publicUrl: string;
const replicas: StartedGateway[] = [];
/** Per replica: the local operator issuer's keys are each replica's own (DATA_DIR). */
const operatorTokens: string[] = [];

const issuer = () => `${publicUrl}/t/fresh/oauth`;
const resource = () => `${publicUrl}/t/fresh/mcp`;

/** The replica a URL of the deployment goes to: each request to the other one. */
let turn = 0;
function onReplica(url: string | URL, index = turn++ % 2): string {
  return String(url).replace(publicUrl, replicas[index]!.baseUrl);
}
const alternating = ((url: string | URL, init?: RequestInit) => fetch(onReplica(url), init)) as typeof fetch;

async function admin(
  replica: number,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Record<string, unknown>; etag: string | null }> {
  const response = await fetch(`${replicas[replica]!.baseUrl}/admin/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${operatorTokens[replica]}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: text === '' ? {} : JSON.parse(text), etag: response.headers.get('etag') };
}

beforeAll(async () => {
  await requireRedis();
  database = await createTestDatabase('hosted_as_replicas');
  const ports = [await freePort(), await freePort()];
  publicUrl = `http://127.0.0.1:${ports[0]}`;
  upstream = await startEntraLikeProvider({
    clients: [{ ...UPSTREAM_CLIENT, redirectUris: [`${publicUrl}/t/fresh/oauth/callback`] }],
    user: { subject: 'bob-pairwise-sub', name: 'Bob Example', email: 'bob@example.com', groups: ['engineering'] },
  });
  for (const port of ports) {
    replicas.push(
      await startGateway({
        admin: {},
        env: {
          PORT: String(port),
          PUBLIC_URL: publicUrl,
          DATABASE_URL: database.url,
          REDIS_URL: redisUrl(),
          SECRETS_KEY: SECRET,
        },
      }),
    );
  }
  for (const replica of replicas) operatorTokens.push((await mintOperatorToken(replica.config, {})).token);
}, 60_000);

afterAll(async () => {
  for (const replica of replicas) await replica.close();
  await upstream?.close();
  await database?.drop();
});

function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

async function token(params: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await alternating(`${issuer()}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The resource URIs the official MCP client lists with `accessToken` on replica `index`. */
async function listedWith(accessToken: string, index: number): Promise<string[]> {
  const client = new Client(
    { name: 'mcpgw-e2e-replicas', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(onReplica(resource(), index)), {
      requestInit: { headers: { authorization: `Bearer ${accessToken}` } },
    }),
  );
  try {
    return (await client.listResources()).resources.map((each) => each.uri);
  } finally {
    await client.close();
  }
}

const lifetimeOf = (accessToken: string) => {
  const { exp, iat } = decodeJwt(accessToken);
  return (exp ?? 0) - (iat ?? 0);
};

describe('a tenant with a hosted authorization server, created through the admin API, on two replicas', () => {
  let clientId: string;
  let refreshToken: string;
  let spent: { code: string; verifier: string };

  it('serves its metadata on both replicas as soon as the write answers', async () => {
    const created = await admin(0, 'POST', '/tenants', {
      id: 'fresh',
      name: 'Fresh Ltd',
      auth: { requiredScopes: ['mcp:read'] },
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    for (const [path, body] of [
      [
        '/tenants/fresh/sources/notes',
        { type: 'static', resources: [{ uri: 'test://fresh/notes/a', name: 'a', text: 'a' }] },
      ],
      ['/tenants/fresh/grants/engineers', { match: { groups: ['engineering'] }, allow: [{ source: 'notes' }] }],
      [
        '/tenants/fresh/authorization-server',
        { upstream: { issuer: upstream.issuer, ...UPSTREAM_CLIENT }, claims: { groups: 'groups' } },
      ],
    ] as const) {
      const written = await admin(1, 'PUT', path, body);
      expect([200, 201], `${path}: ${JSON.stringify(written.json)}`).toContain(written.status);
    }
    // The replica that took the write serves it when it answers; the other one within moments.
    for (const index of [1, 0]) {
      await within(10_000, async () => {
        const response = await fetch(
          `${replicas[index]!.baseUrl}/.well-known/oauth-authorization-server/t/fresh/oauth`,
        );
        expect(response.status).toBe(200);
        const metadata = (await response.json()) as Record<string, unknown>;
        expect(metadata.issuer).toBe(issuer());
        expect(metadata.authorization_endpoint).toBe(`${issuer()}/authorize`);
      });
    }
  });

  it('completes the flow with each step on the other replica, and refreshes on either', async () => {
    const registered = await alternating(`${issuer()}/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        redirect_uris: [REDIRECT_URI],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        client_name: 'replicas client',
      }),
    });
    expect(registered.status).toBe(201);
    clientId = String(((await registered.json()) as Record<string, unknown>).client_id);

    const { verifier, challenge } = pkce();
    const authorize = new URL(`${issuer()}/authorize`);
    for (const [name, value] of Object.entries({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      scope: 'mcp:read',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: resource(),
      state: 'replicas',
    })) {
      authorize.searchParams.set(name, value);
    }
    const back = await followToRedirectUri(authorize, REDIRECT_URI, { fetch: alternating });
    expect(back.searchParams.get('iss')).toBe(issuer());
    const code = back.searchParams.get('code') ?? '';

    const redeemed = await token({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      resource: resource(),
    });
    expect(redeemed.status, JSON.stringify(redeemed.body)).toBe(200);
    const accessToken = String(redeemed.body.access_token);
    expect(decodeJwt(accessToken)).toMatchObject({ sub: 'bob-pairwise-sub', groups: ['engineering'] });
    expect(lifetimeOf(accessToken)).toBe(900);
    spent = { code, verifier };

    // The token opens the tenant's MCP endpoint on both replicas.
    for (const index of [0, 1]) expect(await listedWith(accessToken, index)).toEqual(['test://fresh/notes/a']);

    // The refresh token rotates, on whichever replica.
    const first = String(redeemed.body.refresh_token ?? '');
    expect(first).not.toBe('');
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: first, client_id: clientId });
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    refreshToken = String(refreshed.body.refresh_token);
    expect(refreshToken).not.toBe(first);
  });

  it('applies a settings change on the replica that did not take the write', async () => {
    const current = await admin(1, 'GET', '/tenants/fresh/authorization-server');
    expect(current.status).toBe(200);
    const changed = await admin(
      1,
      'PUT',
      '/tenants/fresh/authorization-server',
      {
        upstream: { issuer: upstream.issuer, clientId: UPSTREAM_CLIENT.clientId },
        claims: { groups: 'groups' },
        tokens: { accessTokenSeconds: 300 },
      },
      { 'if-match': current.etag ?? '' },
    );
    expect(changed.status, JSON.stringify(changed.json)).toBe(200);
    await within(10_000, async () => {
      const response = await fetch(`${replicas[0]!.baseUrl}/t/fresh/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId }),
      });
      const body = (await response.json()) as Record<string, unknown>;
      expect(response.status, JSON.stringify(body)).toBe(200);
      refreshToken = String(body.refresh_token);
      expect(lifetimeOf(String(body.access_token))).toBe(300);
    });
  });

  it("follows a rotation of the tenant's signing key on both replicas, the old key's tokens still accepted", async () => {
    const before = await token({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });
    expect(before.status).toBe(200);
    refreshToken = String(before.body.refresh_token);
    const oldToken = String(before.body.access_token);
    const oldKid = decodeProtectedHeader(oldToken).kid;
    // The signing key is made older than the rotation period (30 days); a rotation then publishes its successor.
    await database.sql(
      "UPDATE authorization_server_signing_keys SET signing_since = signing_since - interval '31 days' WHERE tenant_id = 'fresh'",
    );
    expect(await replicas[0]!.app.authorizationServerSigningKeys.rotate('fresh')).toBe(true);
    // Published, not signing yet: both replicas hear of it, and tokens are still signed with the old key.
    for (const index of [0, 1]) {
      await within(10_000, async () => {
        const jwks = (await (await fetch(`${replicas[index]!.baseUrl}/t/fresh/oauth/jwks`)).json()) as {
          keys: unknown[];
        };
        expect(jwks.keys).toHaveLength(2);
      });
    }
    const meanwhile = await token({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });
    expect(meanwhile.status).toBe(200);
    refreshToken = String(meanwhile.body.refresh_token);
    expect(decodeProtectedHeader(String(meanwhile.body.access_token)).kid).toBe(oldKid);
    // Once published for the delay, the next rotation makes it the signing key.
    await database.sql(
      "UPDATE authorization_server_signing_keys SET created_at = created_at - interval '3 minutes' WHERE tenant_id = 'fresh' AND signing_since IS NULL",
    );
    expect(await replicas[0]!.app.authorizationServerSigningKeys.rotate('fresh')).toBe(true);

    let newToken = '';
    await within(10_000, async () => {
      const refreshed = await token({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });
      expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
      refreshToken = String(refreshed.body.refresh_token);
      newToken = String(refreshed.body.access_token);
      expect(decodeProtectedHeader(newToken).kid).not.toBe(oldKid);
    });
    // Every replica's resource server trusts the new key, and still the retired one (RFC 7517 key rotation).
    for (const accessToken of [newToken, oldToken]) {
      for (const index of [0, 1]) {
        await within(10_000, async () => {
          expect(await listedWith(accessToken, index)).toEqual(['test://fresh/notes/a']);
        });
      }
    }
  });

  it('refuses the code a second time on either replica, and ends its grant (OAuth 2.1 section 4.1.3)', async () => {
    for (const index of [0, 1]) {
      const again = await fetch(`${replicas[index]!.baseUrl}/t/fresh/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: spent.code,
          code_verifier: spent.verifier,
          redirect_uri: REDIRECT_URI,
          client_id: clientId,
        }),
      });
      expect(again.status).toBe(400);
      expect(((await again.json()) as { error: string }).error).toBe('invalid_grant');
    }
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });
    expect(refreshed.status).toBe(400);
    expect(refreshed.body.error).toBe('invalid_grant');
  });
});

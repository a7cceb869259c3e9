/**
 * Real oidc-provider instances over the store, as replicas of one tenant's
 * authorization server: each has its own database handle and Redis
 * connection and its own HTTP server on loopback, all on the same data.
 */
import type { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type JWK } from 'oidc-provider';
import type { AdapterFactory } from '../src/store/adapter-factory.js';

export const CLIENT_ID = 'replica-test-client';
export const REDIRECT_URI = 'http://127.0.0.1/callback';
export const ISSUER = 'http://127.0.0.1/t/acme/oauth';

export interface ProviderReplica {
  readonly provider: Provider;
  /** Base URL of its HTTP server. */
  readonly url: string;
  close(): Promise<void>;
}

export async function startProviderReplica(adapter: AdapterFactory, keys: JWK[]): Promise<ProviderReplica> {
  const provider = new Provider(ISSUER, {
    adapter,
    clients: [
      {
        client_id: CLIENT_ID,
        token_endpoint_auth_method: 'none',
        redirect_uris: [REDIRECT_URI],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
    ],
    jwks: { keys },
    scopes: ['openid', 'offline_access'],
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    issueRefreshToken: () => true,
    features: { devInteractions: { enabled: false } },
    ttl: { AccessToken: 300, AuthorizationCode: 60, Grant: 3600, IdToken: 300, RefreshToken: 3600 },
  });
  // Koa's fallback would print errors to stderr; the tests read responses instead.
  // (The typings list only some of oidc-provider's events; Provider is a Koa app, an EventEmitter.)
  const events: EventEmitter = provider;
  events.on('error', () => undefined);
  events.on('server_error', () => undefined);
  const server: Server = createServer(provider.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    provider,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * An authorization code as the authorization endpoint would have issued it
 * after the user's consent (a Grant, then the code under it), PKCE S256 with
 * `verifier`; resolves to the code and its grant.
 */
export async function issueCode(
  provider: Provider,
  accountId: string,
  challenge: string,
): Promise<{ code: string; grantId: string }> {
  const client = await provider.Client.find(CLIENT_ID);
  if (client === undefined) throw new Error('the test client is missing');
  const grant = new provider.Grant({ accountId, clientId: CLIENT_ID });
  grant.addOIDCScope('openid offline_access');
  const grantId = await grant.save();
  const code = await new provider.AuthorizationCode({
    accountId,
    client,
    grantId,
    scope: 'openid offline_access',
    redirectUri: REDIRECT_URI,
    codeChallenge: challenge,
    codeChallengeMethod: 'S256',
    gty: 'authorization_code',
  }).save();
  return { code, grantId };
}

/** POSTs a form to the replica's token endpoint; the status and the JSON body. */
export async function tokenRequest(
  replica: ProviderReplica,
  form: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${replica.url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: CLIENT_ID, ...form }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

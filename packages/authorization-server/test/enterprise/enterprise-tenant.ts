/**
 * A tenant's hosted authorization server for the enterprise-managed
 * authorization tests: a real oidc-provider 9 instance on 127.0.0.1:0 with
 * the ID-JAG grant registered, as the core registers it. Storage is
 * oidc-provider's own MemoryAdapter (no adapter given): the SQL and Redis
 * adapters are the store's and tested there. The claim mapping, the account
 * claims and the replay store are small in-memory stand-ins for the
 * upstream's and the store's implementations (ports of the grant), kept
 * here so the grant can be tested alone.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { authorizationServerSchema, type AuthorizationServerSettings } from '@mcpgw/config';
import { silentLogger, type EgressGuard, type Logger } from '@mcpgw/core';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { Provider, type ClientMetadata } from 'oidc-provider';
import { createAssertionKeyResolver, type AssertionKeyResolver } from '../../src/enterprise/assertion-issuer-keys.js';
import type { AssertionReplayStore } from '../../src/enterprise/assertion-replay.js';
import {
  idJagGrantType,
  type AssertionAccounts,
  type AssertionClaimMapper,
  type GrantTypeRegistration,
} from '../../src/enterprise/id-jag-grant-type.js';

export const OFFERED_SCOPES = ['resources:read', 'resources:subscribe'];

/** Connectors registered at every test tenant: confidential, allowed the JWT bearer grant (and refresh). */
export const CONNECTOR = { clientId: 'connector', clientSecret: 'connector-secret' };
export const OTHER_CONNECTOR = { clientId: 'other-connector', clientSecret: 'other-secret' };

export interface TenantServer {
  readonly issuer: string;
  readonly tokenEndpoint: string;
  /** The tenant's MCP resource identifier (nothing listens there). */
  readonly resource: string;
  readonly publicJwks: { keys: JWK[] };
  readonly accounts: Map<string, { issuer: string; claims: Readonly<Record<string, unknown>> }>;
  readonly registration: GrantTypeRegistration | undefined;
  close(): Promise<void>;
}

export interface TenantServerOptions {
  readonly tenant: string;
  /** The `authorizationServer` setting, before defaults (parsed by the config schema). */
  readonly settings: Record<string, unknown>;
  readonly replay?: AssertionReplayStore;
  readonly egress?: EgressGuard;
  readonly logger?: Logger;
}

/**
 * A replay store in memory (the real ones are over Redis and SQL, the
 * store's): single use within one process, expiring after the TTL.
 */
export function memoryReplayStore(now: () => number = Date.now): AssertionReplayStore & { keys: Map<string, number> } {
  const keys = new Map<string, number>();
  return {
    keys,
    firstUse(key, ttlSeconds) {
      const until = keys.get(key);
      if (until !== undefined && until > now()) return Promise.resolve(false);
      keys.set(key, now() + ttlSeconds * 1000);
      return Promise.resolve(true);
    },
  };
}

/**
 * A plain claim mapping (the upstream's `mapUpstreamClaims` is the real
 * one): top-level claims only, the subject required.
 */
export const simpleClaimMapping: AssertionClaimMapper = (mapping, identity) => {
  const subject = identity.claims[mapping.subject];
  if (typeof subject !== 'string' || subject === '') throw new Error('no subject');
  const claims: Record<string, unknown> = {};
  for (const [target, source] of [
    ['email', mapping.email],
    ['name', mapping.name],
    ['groups', mapping.groups],
    ...Object.entries(mapping.extra),
  ] as const) {
    const value = identity.claims[source];
    if (value !== undefined) claims[target] = value;
  }
  return { accountId: subject, claims };
};

export async function startTenantServer(options: TenantServerOptions): Promise<TenantServer> {
  const settings: AuthorizationServerSettings = authorizationServerSchema.parse(options.settings);
  // Listening first: the issuer names the port, and the provider is made for its issuer.
  const route: { to?: (req: IncomingMessage, res: ServerResponse) => void } = {};
  const server = createServer((req, res) => route.to!(req, res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = origin;
  const resource = `http://127.0.0.1:8080/t/${options.tenant}/mcp`;

  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const signing: JWK = { ...(await exportJWK(privateKey)), kid: `${options.tenant}-1`, alg: 'RS256', use: 'sig' };
  const publicJwks = { keys: [{ ...(await exportJWK(publicKey)), kid: signing.kid, alg: 'RS256', use: 'sig' }] };

  const accounts: TenantServer['accounts'] = new Map();
  const remember: AssertionAccounts = {
    remember(account) {
      accounts.set(account.accountId, { issuer: account.issuer, claims: account.claims });
      return Promise.resolve();
    },
  };
  const logger = options.logger ?? silentLogger;
  let keys: AssertionKeyResolver | undefined;
  let registration: GrantTypeRegistration | undefined;
  if (settings.enterpriseManaged !== undefined) {
    keys = createAssertionKeyResolver(settings.enterpriseManaged.issuers, { egress: options.egress, logger });
    registration = idJagGrantType(settings, {
      issuer,
      resources: [resource],
      scopes: OFFERED_SCOPES,
      keys,
      mapClaims: simpleClaimMapping,
      accounts: remember,
      replay: options.replay ?? memoryReplayStore(),
      logger,
    });
  }

  const client = (connector: typeof CONNECTOR): ClientMetadata => ({
    client_id: connector.clientId,
    client_secret: connector.clientSecret,
    token_endpoint_auth_method: 'client_secret_basic',
    grant_types: [...(registration === undefined ? [] : [registration.name]), 'refresh_token'],
    response_types: [],
    redirect_uris: [],
  });
  const provider = new Provider(issuer, {
    jwks: { keys: [signing] },
    clients: [client(CONNECTOR), client(OTHER_CONNECTOR)],
    cookies: { keys: ['enterprise-tenant-test-cookie-key'] },
    scopes: OFFERED_SCOPES,
    responseTypes: [],
    // As the core's configuration: refresh tokens for the clients registered for them (this enables the refresh grant).
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== resource) throw new Error(`unknown resource ${indicator}`);
          return {
            audience: resource,
            scope: OFFERED_SCOPES.join(' '),
            accessTokenFormat: 'jwt',
            accessTokenTTL: settings.tokens.accessTokenSeconds,
          };
        },
      },
    },
    // What the core does with the store's account claims: the token carries the mapped claims.
    findAccount: (_ctx, accountId) =>
      accounts.has(accountId) ? { accountId, claims: () => ({ sub: accountId }) } : undefined,
    extraTokenClaims: (_ctx, token) =>
      'accountId' in token && typeof token.accountId === 'string'
        ? { ...accounts.get(token.accountId)?.claims }
        : undefined,
    ...(registration === undefined ? {} : { discovery: { ...registration.discovery } }),
  });
  if (registration !== undefined)
    provider.registerGrantType(registration.name, registration.handler, registration.parameters);
  route.to = provider.callback();

  return {
    issuer,
    tokenEndpoint: `${origin}/token`,
    resource,
    publicJwks,
    accounts,
    registration,
    async close() {
      keys?.close();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** A token request with the JWT bearer grant (RFC 7523 section 2.1), the client authenticated with HTTP Basic. */
export async function exchange(
  server: TenantServer,
  assertion: string | undefined,
  params: Record<string, string> = {},
  connector = CONNECTOR,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const form = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', ...params });
  if (assertion !== undefined) form.set('assertion', assertion);
  const response = await fetch(server.tokenEndpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${connector.clientId}:${connector.clientSecret}`).toString('base64')}`,
    },
    body: form,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

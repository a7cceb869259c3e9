import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { silentLogger } from '@mcpgw/core';
import { exportJWK, generateKeyPair } from 'jose';
import type { ClientMetadata } from 'oidc-provider';
import Provider from 'oidc-provider';
import type { ConsentMemory } from '../../src/interactions/consent-memory.js';
import type { InteractionPages, LoginMethod } from '../../src/interactions/interaction-handler.js';
import { createInteractionPages, type InteractionPagesOptions } from '../../src/interactions/interaction-handler.js';
import { interactionRouteOf } from '../../src/interactions/interaction-route.js';
import { providerErrorPage } from '../../src/interactions/provider-error-page.js';
import type { UpstreamLogin } from '../../src/interactions/upstream-login.js';
import { UpstreamLoginError } from '../../src/interactions/upstream-login.js';

/**
 * A tenant's hosted authorization server in miniature, for the interaction
 * tests: a real oidc-provider instance at `${base}/t/acme/oauth` on a plain
 * node http server, with the interaction handler mounted under it as the
 * core mounts it, and a client application on another port (another origin)
 * that records what arrives at its redirect URI.
 *
 * Storage is oidc-provider's own MemoryAdapter (what it uses when no adapter
 * is configured): the store's SQL and Redis adapters are tested by the
 * store. Consent memory is a Map here for the same reason.
 */
export interface InteractionFixture {
  base: string;
  issuer: string;
  /** The tenant's canonical MCP resource (RFC 8707), the audience of its tokens. */
  resource: string;
  provider: Provider;
  consentMemory: MapConsentMemory;
  /** Query strings that reached the client application's redirect URI, oldest first. */
  redirects: URLSearchParams[];
  redirectUri: string;
  /** An authorization request of `clientId` (PKCE S256) and the verifier to redeem its code. */
  authorization(clientId: string, scope?: string): { url: string; verifier: string; state: string };
  /** Redeems a code at the token endpoint, as the client would. */
  redeem(clientId: string, code: string, verifier: string): Promise<{ status: number; body: Record<string, unknown> }>;
  close(): Promise<void>;
}

export const TENANT_NAME = 'Acme Research';
/** What the test clients ask for unless told otherwise. */
export const SCOPES = 'openid resources:read';

/** Consent memory over a Map: what the store does over its Grant records. */
export class MapConsentMemory implements ConsentMemory {
  readonly grants = new Map<string, string>();
  async find(accountId: string, clientId: string): Promise<string | undefined> {
    return this.grants.get(`${accountId}\0${clientId}`);
  }
  async remember(accountId: string, clientId: string, grantId: string): Promise<void> {
    this.grants.set(`${accountId}\0${clientId}`, grantId);
  }
}

export interface FixtureOptions {
  /** Clients registered from the start, besides their redirect URI (filled in: the client application's). */
  clients: Array<Omit<ClientMetadata, 'redirect_uris'> & { client_id: string }>;
  /** How users sign in; a function for an upstream that needs the server's base URL. */
  login: LoginMethod | ((base: string) => LoginMethod);
  /** Extra routes on the server (a stand-in upstream), tried before the issuer's. */
  extraRoutes?: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** The handler's `onUpstreamFailure` (what the audit trail is told). */
  onUpstreamFailure?: InteractionPagesOptions['onUpstreamFailure'];
}

export async function startInteractionFixture(options: FixtureOptions): Promise<InteractionFixture> {
  const redirects: URLSearchParams[] = [];
  const clientApp = await listen((req, res) => {
    const url = new URL(req.url ?? '/', 'http://client.invalid');
    if (url.pathname !== '/cb') return void res.writeHead(404).end();
    redirects.push(url.searchParams);
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html lang="en"><title>Client</title><main><h1>Back at the client</h1></main></html>');
  });
  const redirectUri = `${origin(clientApp)}/cb`;

  // Filled in once the server listens: the issuer names its port.
  const app: {
    provider?: Provider;
    handler?: InteractionPages;
    mounted?: (req: IncomingMessage, res: ServerResponse) => void;
  } = {};
  const issuerPath = '/t/acme/oauth';
  const server = await listen((req, res) => {
    if (options.extraRoutes?.(req, res) === true) return;
    const { provider, handler, mounted } = app;
    if (provider === undefined || handler === undefined || mounted === undefined) return void res.writeHead(503).end();
    const url = new URL(req.url ?? '/', 'http://server.invalid');
    if (!url.pathname.startsWith(`${issuerPath}/`)) return void res.writeHead(404).end();
    const inner = url.pathname.slice(issuerPath.length);
    const route = interactionRouteOf(inner);
    if (route !== undefined) return void handler.handle(req, res, route, provider);
    // oidc-provider routes on the path below its mount point and rebuilds its URLs from originalUrl.
    (req as IncomingMessage & { originalUrl?: string }).originalUrl = req.url;
    req.url = `${inner}${url.search}`;
    mounted(req, res);
  });
  const base = origin(server);
  const issuer = `${base}${issuerPath}`;
  const resource = `${base}/t/acme/mcp`;

  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const consentMemory = new MapConsentMemory();
  const login = typeof options.login === 'function' ? options.login(base) : options.login;
  app.handler = createInteractionPages({
    tenant: { id: 'acme', displayName: TENANT_NAME },
    issuer,
    login,
    consentMemory,
    csrfKey: randomBytes(32),
    logger: silentLogger,
    ...(options.onUpstreamFailure === undefined ? {} : { onUpstreamFailure: options.onUpstreamFailure }),
  });
  const provider = new Provider(issuer, {
    clients: options.clients.map((client) => ({
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      ...client,
      redirect_uris: [redirectUri],
    })),
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    jwks: { keys: [{ ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'test' }] },
    findAccount: (_ctx, accountId) => ({ accountId, claims: () => ({ sub: accountId }) }),
    scopes: ['openid', 'offline_access', 'profile', 'resources:read'],
    ttl: {
      AuthorizationCode: 60,
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
      AccessToken: 600,
      IdToken: 600,
      RefreshToken: 3600,
    },
    pkce: { required: () => true },
    interactions: { url: (_ctx, interaction) => `${issuerPath}/interaction/${interaction.uid}` },
    renderError: providerErrorPage(TENANT_NAME),
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          audience: resource,
          scope: 'resources:read',
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
  });
  app.provider = provider;
  app.mounted = provider.callback();

  return {
    base,
    issuer,
    resource,
    provider,
    consentMemory,
    redirects,
    redirectUri,
    authorization(clientId, scope = SCOPES) {
      const verifier = randomBytes(32).toString('base64url');
      const state = randomBytes(8).toString('base64url');
      const url = new URL(`${issuer}/auth`);
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: redirectUri,
        scope,
        state,
        resource,
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
      }).toString();
      return { url: url.href, verifier, state };
    },
    async redeem(clientId, code, verifier) {
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: redirectUri,
          code_verifier: verifier,
          client_id: clientId,
          resource,
        }),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
    async close() {
      await Promise.all([close(server), close(clientApp)]);
    },
  };
}

/**
 * A stand-in for the upstream sign-in (the upstream module implements the
 * real one, tested against a local OpenID Connect provider): `start` sends
 * the browser to a page on the fixture's server that "signs in" `accountId`
 * at once and redirects to `${issuer}/callback` with a state it remembers,
 * or, with `refuse`, returns the upstream's `error=access_denied`.
 */
export function standInUpstream(accountId: string): {
  upstream: (base: string) => LoginMethod;
  routes: (req: IncomingMessage, res: ServerResponse) => boolean;
  refuseNext(): void;
} {
  const pending = new Map<string, string>();
  let refuse = false;
  let base = '';
  const upstream: UpstreamLogin = {
    async start({ interactionUid }) {
      const state = randomBytes(16).toString('base64url');
      pending.set(state, interactionUid);
      return `${base}/upstream/authorize?state=${state}`;
    },
    async finish(query) {
      const state = query.get('state') ?? '';
      const interactionUid = pending.get(state);
      pending.delete(state);
      if (interactionUid === undefined)
        throw new UpstreamLoginError({ error: 'invalid_request', description: 'unknown state' });
      const error = query.get('error');
      if (error !== null) {
        throw new UpstreamLoginError({
          error,
          description: query.get('error_description') ?? undefined,
          interactionUid,
        });
      }
      return { interactionUid, accountId };
    },
  };
  return {
    upstream: (serverBase) => {
      base = serverBase;
      return { kind: 'upstream', upstream };
    },
    routes: (req, res) => {
      const url = new URL(req.url ?? '/', 'http://server.invalid');
      if (url.pathname !== '/upstream/authorize') return false;
      const state = url.searchParams.get('state') ?? '';
      const answer = refuse
        ? new URLSearchParams({ state, error: 'access_denied', error_description: 'AADSTS50105: <b>not assigned</b>' })
        : new URLSearchParams({ state, code: 'upstream-code' });
      refuse = false;
      res.writeHead(303, { Location: `${base}/t/acme/oauth/callback?${answer}` }).end();
      return true;
    },
    refuseNext: () => {
      refuse = true;
    },
  };
}

function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer(handler);
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

function origin(server: Server): string {
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

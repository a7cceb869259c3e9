import type { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import type { Logger } from '@mcpgw/core';
import { finishInteraction } from './auto-consent.js';
import { createDevAdapter } from './dev-adapter.js';
import { loadOrCreateKeystore } from './keystore.js';
import { assertLoopbackIssuer } from './loopback-issuer.js';
import { importOidcProvider, routeProviderNotices } from './provider-notices.js';
import { knownScopes, providerConfiguration } from './provider-configuration.js';
import { routeDevRequest } from './request-routing.js';
import type { DevClient, DevResource } from './resource-servers.js';
import { indexResources } from './resource-servers.js';

export interface DevAuthorizationServerOptions {
  /**
   * The issuer identifier, on the gateway's own origin under a path, e.g.
   * `http://127.0.0.1:8080/dev-idp`. Must name a loopback host, else
   * creation throws: this server signs in anyone who reaches it.
   */
  issuer: string;
  /**
   * The private JWKS file, e.g. `<repo>/.data/dev-authorization-server/keys.json`:
   * created (mode 0600) on first use and reused after, so tokens survive a
   * restart and the token CLI signs without the server running. Dynamically
   * registered clients are kept beside it in `clients.jsonl` (at most
   * {@link MAX_REGISTERED_CLIENTS}, the oldest forgotten first).
   */
  keystorePath: string;
  /** The resources tokens may be issued for (each tenant that trusts this server); any other `resource` → invalid_target. */
  resources: DevResource[];
  /** Clients registered from the start, such as the gateway's admin sign-in (public clients: PKCE, no secret). */
  clients?: DevClient[];
  logger: Logger;
}

export interface DevAuthorizationServer {
  readonly issuer: string;
  /** The verification keys: a tenant's verifier takes them as an inline JWKS (no HTTP fetch). */
  readonly publicJwks: { keys: object[] };
  /**
   * Serves every path under the issuer's path, plus the discovery documents
   * at `/.well-known/oauth-authorization-server{path}` and
   * `/.well-known/openid-configuration{path}`. It reads the request body
   * itself: mount it where nothing has consumed the body. Anything else → 404.
   */
  handler(req: IncomingMessage, res: ServerResponse): void;
  /** Waits for pending writes of registered clients. */
  close(): Promise<void>;
}

/**
 * How many dynamically registered clients the server keeps. Far more than the
 * MCP clients one developer uses; registering one more forgets the oldest,
 * which registers again when it next comes back.
 */
export const MAX_REGISTERED_CLIENTS = 100;

/** oidc-provider's mount support reads `req.originalUrl` (Express' name) to rebuild absolute endpoint URLs. */
type MountedRequest = IncomingMessage & { originalUrl?: string };

/**
 * Starts the built-in development OAuth 2.1 / OpenID Connect server, so
 * that `npm start` works with no identity provider: oidc-provider with
 * a demo user signed in and consenting automatically, authorization code +
 * PKCE, resource indicators (RFC 8707) issuing JWT access tokens (RFC 9068)
 * whose `aud` is the tenant's MCP endpoint, dynamic client registration
 * (RFC 7591) and Client ID Metadata Documents.
 */
export async function createDevAuthorizationServer(
  options: DevAuthorizationServerOptions,
): Promise<DevAuthorizationServer> {
  const issuerUrl = assertLoopbackIssuer(options.issuer);
  const mountPath = issuerUrl.pathname;
  const { logger } = options;
  const resources = indexResources(options.resources);
  const scopes = knownScopes(resources);
  const keystore = await loadOrCreateKeystore(options.keystorePath);
  const adapter = await createDevAdapter({
    clientsLog: join(dirname(options.keystorePath), 'clients.jsonl'),
    legacyClientsFile: join(dirname(options.keystorePath), 'clients.json'),
    maxClients: MAX_REGISTERED_CLIENTS,
    logger,
  });

  const { Provider, errors } = await importOidcProvider(logger);
  const configuration = providerConfiguration({
    mountPath,
    resources,
    scopes,
    privateJwks: keystore.privateJwks,
    clients: options.clients ?? [],
    adapter: adapter.factory,
    InvalidTarget: errors.InvalidTarget,
    InvalidClientMetadata: errors.InvalidClientMetadata,
  });
  const provider = await routeProviderNotices(logger, () => new Provider(issuerUrl.href, configuration));

  // Client mistakes (a bad redirect_uri, an unknown resource) are the client's to read in the
  // response; the server's own failures are ours to see.
  // (The typings list only some of oidc-provider's events; Provider is a Koa app, an EventEmitter.)
  const events: EventEmitter = provider;
  events.on('server_error', (_ctx: unknown, error: unknown) =>
    logger.error({ err: error }, 'development authorization server: internal error'),
  );
  for (const event of CLIENT_ERROR_EVENTS) {
    events.on(event, (_ctx: unknown, error: { message?: string; error_description?: string }) =>
      logger.debug(
        { event, error: error.message, description: error.error_description },
        'development authorization server: request refused',
      ),
    );
  }
  // Koa's fallback for errors outside oidc-provider's routes would print to stderr.
  events.on('error', (error: unknown) =>
    logger.error({ err: error }, 'development authorization server: unhandled error'),
  );

  const callback = provider.callback();

  return {
    issuer: issuerUrl.href,
    publicJwks: keystore.publicJwks,
    handler(req: MountedRequest, res: ServerResponse) {
      const route = routeDevRequest(mountPath, req.url ?? '/');
      if (route.kind === 'not-found') {
        res.statusCode = 404;
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ error: 'not_found' }));
        return;
      }
      if (route.kind === 'interaction') {
        finishInteraction(provider, resources, scopes, route.uid, req, res, logger).catch((error: unknown) => {
          logger.error({ err: error }, 'development authorization server: interaction failed');
          if (!res.headersSent) res.statusCode = 500;
          res.end();
        });
        return;
      }
      // Koa reads the path from req.url for as long as it handles the request; put the
      // real one back as the response ends, before the host's access log reads it.
      const received = req.url;
      const end = res.end;
      res.end = function (this: ServerResponse, ...args: unknown[]) {
        req.url = received;
        delete req.originalUrl;
        return (end as (...a: unknown[]) => ServerResponse).apply(this, args);
      } as ServerResponse['end'];
      req.originalUrl = `${mountPath}${route.url}`;
      req.url = route.url;
      void callback(req, res);
    },
    close: () => adapter.flush(),
  };
}

// The `<endpoint>.error` events oidc-provider emits when it refuses a request.
const CLIENT_ERROR_EVENTS = [
  'authorization.error',
  'grant.error',
  'registration_create.error',
  'registration_read.error',
  'discovery.error',
  'jwks.error',
  'userinfo.error',
  'revocation.error',
  'end_session.error',
] as const;

import type { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type {
  InteractionContext,
  RoutedRequest,
  TenantAuthorizationServer,
  TenantAuthorizationServerOptions,
} from './authorization-server-options.js';
import { publicKeysOf } from './keystore-file.js';
import { parseIssuer } from './loopback.js';
import { importOidcProvider, routeProviderNotices } from './provider-notices.js';
import { providerConfiguration, withClientPolicy } from './provider-configuration.js';
import { indexResources, normalizeResource } from './resource-indicators.js';

/** oidc-provider's mount support reads `req.originalUrl` (Express' name) to rebuild absolute endpoint URLs. */
type MountedRequest = IncomingMessage & { originalUrl?: string };

/**
 * Creates one tenant's hosted OAuth 2.1 authorization server: an
 * oidc-provider `Provider` for the tenant's issuer (docs/adr/0011), configured
 * by providerConfiguration, with its storage, accounts, interactions, client
 * policy and extension grants injected. It serves requests already routed to
 * the tenant (routeAuthorizationServerRequest); it never listens itself.
 */
export async function createTenantAuthorizationServer(
  options: TenantAuthorizationServerOptions,
): Promise<TenantAuthorizationServer> {
  const { logger, settings } = options;
  const issuerUrl = parseIssuer(options.issuer, 'demo' in settings.upstream);
  const issuer = issuerUrl.href;
  const mountPath = issuerUrl.pathname;
  if (options.signingKeys.keys.length === 0) throw new Error('authorization server: no signing key');
  if (options.resources.length === 0) throw new Error('authorization server: no resource to issue tokens for');
  const resources = indexResources(options.resources, options.scopes, options.extraResources);

  const { Provider, errors } = await importOidcProvider(logger);
  const configuration = withClientPolicy(
    providerConfiguration({
      mountPath,
      resources,
      scopes: [...options.scopes, ...(options.extraResources ?? []).flatMap((resource) => resource.scopes)],
      settings,
      privateJwks: options.signingKeys,
      staticClients: options.staticClients ?? [],
      adapter: options.adapter,
      findAccount: options.findAccount,
      cookieKeys: options.cookieKeys,
      errors,
    }),
    options.clientPolicy,
  );
  const provider = await routeProviderNotices(logger, () => new Provider(issuer, configuration));
  // Endpoint URLs are built from the request's origin: make it the issuer's, whatever Host (a loopback
  // alias) or scheme (TLS ended at a proxy) the request came with, so every URL in metadata and
  // redirects is under the issuer (RFC 8414 section 3.3).
  provider.proxy = true;
  for (const grant of options.grantTypes ?? []) provider.registerGrantType(grant.name, grant.handler, grant.parameters);
  options.attachProvider?.(provider);

  // Client mistakes (a bad redirect_uri, an unknown resource) are the client's to read in the
  // response; the server's own failures are ours to see.
  // (The typings list only some of oidc-provider's events; Provider is a Koa app, an EventEmitter.)
  const events: EventEmitter = provider;
  events.on('server_error', (_ctx: unknown, error: unknown) =>
    logger.error({ err: error }, 'authorization server: internal error'),
  );
  for (const event of CLIENT_ERROR_EVENTS) {
    events.on(event, (_ctx: unknown, error: { message?: string; error_description?: string; error_detail?: string }) =>
      logger.debug(
        // `error_detail` is oidc-provider's reason beyond the generic description (never sent to the client).
        { event, error: error.message, description: error.error_description, detail: error.error_detail },
        'authorization server: request refused',
      ),
    );
  }
  // Koa's fallback for errors outside oidc-provider's routes would print to stderr.
  events.on('error', (error: unknown) => logger.error({ err: error }, 'authorization server: unhandled error'));

  const callback = provider.callback();
  const contextOf = (req: IncomingMessage, res: ServerResponse): InteractionContext => ({
    provider,
    tenantId: options.tenantId,
    issuer,
    resources: options.resources,
    scopes: options.scopes,
    resourceScopes: (indicator) => {
      const key = normalizeResource(indicator);
      return key === undefined ? undefined : resources.get(key)?.scopes;
    },
    settings,
    logger,
    req,
    res,
  });
  const fail = (res: ServerResponse) => (error: unknown) => {
    logger.error({ err: error }, 'authorization server: interaction failed');
    if (!res.headersSent) res.statusCode = 500;
    res.end();
  };

  return {
    tenantId: options.tenantId,
    issuer,
    publicJwks: publicKeysOf(options.signingKeys),
    provider,
    handle(route: RoutedRequest, req: MountedRequest, res: ServerResponse) {
      if (route.kind === 'interaction') {
        options.interactions.interaction(contextOf(req, res), route.uid).catch(fail(res));
        return;
      }
      if (route.kind === 'callback') {
        const handler = options.interactions.callback;
        if (handler === undefined) {
          res.statusCode = 404;
          res.setHeader('Content-Type', 'application/json');
          res.end(JSON.stringify({ error: 'not_found' }));
          return;
        }
        handler(contextOf(req, res)).catch(fail(res));
        return;
      }
      // Koa reads the path from req.url, and the origin from these headers (provider.proxy), for as
      // long as it handles the request; put the real ones back as the response ends, before the
      // host's access log reads them.
      const received = { url: req.url, proto: req.headers['x-forwarded-proto'], host: req.headers['x-forwarded-host'] };
      const end = res.end;
      res.end = function (this: ServerResponse, ...args: unknown[]) {
        req.url = received.url;
        delete req.originalUrl;
        restoreHeader(req, 'x-forwarded-proto', received.proto);
        restoreHeader(req, 'x-forwarded-host', received.host);
        return (end as (...a: unknown[]) => ServerResponse).apply(this, args);
      } as ServerResponse['end'];
      req.headers['x-forwarded-proto'] = issuerUrl.protocol.slice(0, -1);
      req.headers['x-forwarded-host'] = issuerUrl.host;
      req.originalUrl = `${mountPath}${route.url}`;
      req.url = route.url;
      void callback(req, res);
    },
  };
}

function restoreHeader(req: IncomingMessage, name: string, value: string | string[] | undefined): void {
  if (value === undefined) delete req.headers[name];
  else req.headers[name] = value;
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
] as const;

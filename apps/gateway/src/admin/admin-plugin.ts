import { createHmac } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RateLimits } from '../plugins/rate-limit.js';
import type { AdminPrincipal } from '@mcpgw/admin';
import { AdminProblem, readPreconditions, tooManyRequests } from '@mcpgw/admin';
import type { AdminAuthenticator } from './admin-authenticator.js';
import type { AdminDeps, AdminRoute, AdminRouteTable } from './admin-route.js';
import { installAdminErrors } from './admin-errors.js';
import { addressedTenant } from './bearer-authenticator.js';
import { checkRouteAccess, runAdminOperation } from './admin-operation-runner.js';

export interface AdminPluginOptions {
  readonly deps: Omit<AdminDeps, 'routes'>;
  readonly table: AdminRouteTable;
  /** Asked in order; the first to name the caller wins (a bearer token, then a browser session). */
  readonly authenticators: readonly AdminAuthenticator[];
  /** The WWW-Authenticate challenge of a 401 for a request that named no credentials. */
  readonly challenge: (tenantId: string | undefined) => string;
  /** The gateway's rate limits: the admin API's own per address and per principal (RATE_LIMIT_ADMIN_*). */
  readonly rateLimits: Pick<RateLimits, 'checkAdminAddress' | 'checkAdminPrincipal'>;
  /** Keys the per-principal counter, so that no subject is readable in Redis (`ServerKeys.adminPrincipalCounter`). */
  readonly principalKeySecret: Uint8Array;
}

/** `{name}` (OpenAPI) → `:name` (Fastify). */
const fastifyPath = (path: string): string => path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');

/**
 * The admin API (`/admin/v1`, docs/admin-api.md): every route of the table,
 * each behind its access rule. A tenant admin addressing another tenant gets
 * the same 404, byte for byte, as for a tenant that does not exist.
 */
export async function adminPlugin(app: FastifyInstance, options: AdminPluginOptions): Promise<void> {
  const deps: AdminDeps = { ...options.deps, routes: () => options.table.list() };
  installAdminErrors(app);
  // Admin answers are per caller and may change at any write (RFC 9111 section 5.2.2.5).
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });

  const principalOf = async (request: FastifyRequest): Promise<AdminPrincipal> => {
    for (const authenticator of options.authenticators) {
      const principal = await authenticator.authenticate(request);
      if (principal !== undefined) return principal;
    }
    throw new AdminProblem('unauthenticated', 'Send an access token in the Authorization header (Bearer)', [], {
      'www-authenticate': options.challenge(addressedTenant(request)),
    });
  };

  const principalKey = (principal: AdminPrincipal): string =>
    createHmac('sha256', options.principalKeySecret)
      .update(
        JSON.stringify([
          principal.kind,
          principal.kind === 'tenant-admin' ? principal.tenantId : '',
          principal.issuer,
          principal.subject,
        ]),
      )
      .digest('base64url');

  /**
   * Everything that decides whether a request may run at all, in an
   * `onRequest` hook: before Fastify reads or parses the body, so an
   * anonymous caller's body (malformed, or past the body limit) costs
   * nothing and is answered 401, not 400 or 413. The address limit comes
   * first, before any token is verified; the caller's own limit once it is known.
   */
  const admit = async (route: AdminRoute, request: FastifyRequest): Promise<AdminPrincipal | undefined> => {
    const byAddress = await options.rateLimits.checkAdminAddress(request);
    if (byAddress !== undefined) throw tooManyRequests(byAddress);
    if (route.access === 'public') return undefined;
    const principal = await principalOf(request);
    checkRouteAccess(route, principal, addressedTenant(request));
    const byPrincipal = await options.rateLimits.checkAdminPrincipal(request, principalKey(principal));
    if (byPrincipal !== undefined) throw tooManyRequests(byPrincipal);
    return principal;
  };
  const admitted = new WeakMap<FastifyRequest, AdminPrincipal>();

  const serve = (route: AdminRoute) => (request: FastifyRequest, signal: AbortSignal) =>
    runAdminOperation(route, deps, {
      principal: admitted.get(request),
      params: request.params,
      query: request.query,
      body: request.body,
      preconditions: readPreconditions(request),
      request,
      signal,
    });

  for (const route of options.table.list()) {
    const handle = serve(route);
    app.route({
      method: route.method,
      url: fastifyPath(route.path),
      // Shed like the MCP endpoint while the event loop is late (plugins/load-shedding.ts).
      config: { loadShed: true },
      onRequest: async (request) => {
        const principal = await admit(route, request);
        if (principal !== undefined) admitted.set(request, principal);
      },
      handler: async (request, reply) => {
        // The response's 'close' before it finished is the client leaving. (The request's own 'close' is
        // no such sign: Node emits it as soon as the body has been read.)
        const gone = new AbortController();
        reply.raw.once('close', () => {
          if (!reply.raw.writableFinished) gone.abort();
        });
        const { result, applied } = await handle(request, gone.signal);
        if (result.etag !== undefined) reply.header('etag', result.etag);
        for (const [name, value] of Object.entries(applied)) reply.header(name, value);
        reply.code(result.status);
        if (result.body === undefined) return reply.send();
        return reply.type(result.mediaType ?? 'application/json').send(result.body);
      },
    });
  }
}

import type { FastifyReply } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { routeAuthorizationServerRequest } from '@mcpgw/authorization-server';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** Every tenant's issuer and what is under it, and the path-inserted discovery documents (RFC 8414 section 3.1, section 5). */
const PATHS = [
  '/t/:tenantId/oauth',
  '/t/:tenantId/oauth/*',
  '/.well-known/oauth-authorization-server/t/:tenantId/oauth',
  '/.well-known/openid-configuration/t/:tenantId/oauth',
];

/**
 * Mounts the tenants' hosted authorization servers on the gateway's port
 * (docs/adr/0011). The request guard (Host and Origin) has run by then, as on
 * every route. Each request counts against its address's and its tenant's
 * rate limits, as an MCP request does, before the tenant's Provider is
 * touched; then the raw request goes to that Provider untouched: oidc-provider
 * reads and validates bodies itself, so these routes live in their own scope
 * whose only content-type parser leaves the body unread. Unknown tenants, and
 * tenants without a hosted server, get 404.
 */
export const authorizationServerRoutesPlugin = fastifyPlugin(
  async (app) => {
    const servers = app.authorizationServers;
    // A tenant's Provider follows its runtime: dropped as soon as the runtime is swapped or removed.
    const unsubscribe = app.tenants.onServingChange((tenantId) => servers.forget(tenantId));
    app.addHook('onClose', async () => unsubscribe());

    await app.register(async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
      for (const url of PATHS) {
        scope.route({
          method: [...METHODS],
          url,
          // Fastify would otherwise add a HEAD route beside GET; HEAD is listed above.
          exposeHeadRoute: false,
          handler: async (request, reply) => {
            const route = routeAuthorizationServerRequest(request.raw.url ?? '/');
            if (route.kind === 'not-found') return notFound(reply);
            const { rateLimits } = app.limits;
            const tenant = app.tenants.serving.get(route.tenantId)?.config;
            const limited =
              (await rateLimits.checkAddress(request)) ??
              (tenant === undefined ? undefined : await rateLimits.checkTenant(request, tenant));
            if (limited !== undefined) {
              return reply
                .code(429)
                .header('retry-after', String(limited.retryAfterSeconds))
                .header('cache-control', 'no-store')
                .send({ error: 'temporarily_unavailable', error_description: 'Too many requests; try again later' });
            }
            await app.tenants.whenCurrent(route.tenantId);
            const server = await app.authorizationServers.serverFor(route.tenantId);
            if (server === undefined) return notFound(reply);
            reply.hijack();
            server.handle(route, request.raw, reply.raw);
            return reply;
          },
        });
      }
    });
  },
  {
    name: 'mcpgw-authorization-server-routes',
    dependencies: ['mcpgw-authorization-server', 'mcpgw-tenants', 'mcpgw-limits'],
  },
);

function notFound(reply: FastifyReply): FastifyReply {
  return reply
    .code(404)
    .header('cache-control', 'no-store')
    .send({ error: 'not_found', error_description: 'No authorization server here' });
}

import type { FastifyInstance } from 'fastify';
import type { DevAuthorizationServer } from '@mcpgw/dev-authorization-server';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/**
 * Mounts the development authorization server on the gateway's port: every
 * method on `{issuer path}` and below, and the path-inserted discovery
 * documents MCP clients try first (RFC 8414 §3.1, and §5 for OpenID Connect).
 * The requests go to `server.handler` untouched: oidc-provider reads and
 * validates bodies itself, so these routes live in their own plugin whose only
 * content-type parser leaves the body unread.
 */
export function registerDevAuthorizationServerRoutes(app: FastifyInstance, server: DevAuthorizationServer): void {
  const mountPath = new URL(server.issuer).pathname;
  const paths = [
    mountPath,
    `${mountPath}/*`,
    `/.well-known/oauth-authorization-server${mountPath}`,
    `/.well-known/openid-configuration${mountPath}`,
  ];
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    for (const url of paths) {
      scope.route({
        method: [...METHODS],
        url,
        // Fastify would otherwise add a HEAD route beside GET; HEAD is listed above.
        exposeHeadRoute: false,
        handler: (request, reply) => {
          reply.hijack();
          server.handler(request.raw, reply.raw);
        },
      });
    }
  });
}

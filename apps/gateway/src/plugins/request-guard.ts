import fastifyPlugin from 'fastify-plugin';
import { errorResponse, wireError } from '@mcpgw/protocol';
import { MCP_ROUTE } from '../mcp-route.js';
import { createRequestGuard, type RequestGuardOptions } from '@mcpgw/tenancy';
import { noteRpcResponse } from '../request-log-fields.js';

/**
 * Puts the Host/Origin check in front of every route, not only the MCP
 * endpoint: the tenants' hosted authorization servers (registration, sign-in),
 * the well-known documents and the probes are as reachable by a rebinding
 * page as `/t/{tenant}/mcp` is. A refusal is 403 before any handler runs; the
 * MCP endpoint's is a JSON-RPC error (transports: "If the Origin header is
 * present and invalid, servers MUST respond with HTTP 403 Forbidden"), the
 * other routes' an OAuth-style JSON error. Routes named in `unguardedRoutes`
 * (the health probes, which reveal nothing, and a token-protected `/metrics`)
 * are reached by address and skip it.
 */
export const requestGuardPlugin = fastifyPlugin<RequestGuardOptions>(
  async (app, options) => {
    const guard = createRequestGuard(options);
    const unguarded = new Set(options.unguardedRoutes ?? []);
    app.addHook('onRequest', async (request, reply) => {
      if (request.routeOptions.url !== undefined && unguarded.has(request.routeOptions.url)) return;
      const verdict = guard(request.headers.host, request.headers.origin);
      if (verdict.ok) return;
      reply.code(403).type('application/json');
      if (request.routeOptions.url === MCP_ROUTE) {
        const { body } = errorResponse(null, wireError('MCPGW_REQUEST_FORBIDDEN', verdict.reason));
        noteRpcResponse(request, body);
        return reply.send(body);
      }
      return reply.send({ error: 'forbidden', error_description: verdict.reason });
    });
  },
  { name: 'mcpgw-request-guard' },
);

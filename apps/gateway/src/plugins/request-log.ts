import fastifyPlugin from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import '../request-log-fields.js';

const TENANT_ID = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * One access line per request, at info: method, path (never the query, which
 * could hold a misplaced token), status, latency, the tenant of `/t/{tenant}/…`
 * and `/.well-known/…/t/{tenant}/…` paths, the MCP method (the `Mcp-Method`
 * header of 2026-07-28, else the body's `method`, which is all the initialize
 * era sends), and what the route noted: the JSON-RPC error code, the caller's
 * fingerprint and client id. Never a token, a claim value or a body.
 */
export const requestLogPlugin = fastifyPlugin(
  async (app) => {
    app.decorateRequest('mcpLog', null);
    app.addHook('onResponse', async (request, reply) => {
      const tenant = (request.params as { tenant?: unknown } | undefined)?.tenant;
      request.log.info(
        {
          method: request.method,
          url: request.url.split('?')[0],
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime),
          ...(typeof tenant === 'string' && TENANT_ID.test(tenant) ? { tenant } : {}),
          ...optional('mcpMethod', mcpMethodOf(request)),
          ...request.mcpLog,
        },
        'request',
      );
    });
  },
  { name: 'mcpgw-request-log' },
);

function mcpMethodOf(request: FastifyRequest): string | undefined {
  const method = (request.body as { method?: unknown } | undefined)?.method;
  if (typeof method === 'string') return method.slice(0, 100);
  const header = request.headers['mcp-method'];
  return typeof header === 'string' ? header.slice(0, 100) : undefined;
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}

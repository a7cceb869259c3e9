import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AccessScope, Logger } from '@mcpgw/core';
import { unrestrictedScope } from '@mcpgw/core';
import {
  ErrorCode,
  McpError,
  dispatchMcpPost,
  errorResponse,
  invalidRequest,
  serializeResponse,
} from '@mcpgw/protocol';
import type { McpHttpResponse, RequestId } from '@mcpgw/protocol';
import type { GuardVerdict } from '../plugins/request-guard.js';
import type { TenantRuntime } from '../tenant-runtime.js';

/** How long a client may cache `server/discover` (it changes only with configuration). */
const DISCOVER_TTL_MS = 300_000;
const TENANT_ID = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export interface McpRouteOptions {
  tenants: ReadonlyMap<string, TenantRuntime>;
  guard: (host: string | undefined, origin: string | undefined) => GuardVerdict;
}

interface TenantParams {
  tenant: string;
}

/** The tenant and the caller's resource set, once the caller is admitted. */
interface McpCaller {
  tenant: TenantRuntime;
  scope: AccessScope;
  /** Aborted when the client disconnects. */
  signal: AbortSignal;
}

declare module 'fastify' {
  interface FastifyRequest {
    mcpCaller: McpCaller | null;
  }
}

/**
 * The per-tenant MCP endpoint, `POST /t/{tenant}/mcp` (2026-07-28
 * transports: one endpoint, POST only). Framework concerns live here; the
 * protocol itself is @mcpgw/protocol's `dispatchMcpPost`.
 */
export function registerMcpRoutes(app: FastifyInstance, options: McpRouteOptions): void {
  const { tenants, guard } = options;
  app.decorateRequest('mcpCaller', null);

  const guardRequest = async (request: FastifyRequest, reply: FastifyReply) => {
    const verdict = guard(request.headers.host, request.headers.origin);
    if (!verdict.ok) {
      // "If the Origin header is present and invalid, servers MUST respond with HTTP 403 Forbidden."
      return send(reply, errorResponse(null, invalidRequest(verdict.reason, 403)));
    }
    return undefined;
  };

  /**
   * Who is calling, settled before the body is read: an unknown tenant or a
   * caller without valid credentials costs no JSON parsing.
   */
  const admitCaller = async (request: FastifyRequest<{ Params: TenantParams }>, reply: FastifyReply) => {
    const tenant = lookupTenant(tenants, request.params.tenant);
    if (tenant === undefined) return send(reply, unknownTenant(request.params.tenant, null));
    const signal = abortOnDisconnect(reply);
    let scope: AccessScope = unrestrictedScope;
    if (tenant.auth !== undefined) {
      const outcome = await tenant.auth.authenticate({ rawHeaders: request.raw.rawHeaders, url: request.url }, signal);
      if (!outcome.ok) {
        // 401/403 carry the RFC 6750 / RFC 9728 challenge, plus a JSON-RPC body a client can show.
        reply.header('www-authenticate', outcome.challenge);
        return send(reply, errorResponse(null, invalidRequest(outcome.message, outcome.status)));
      }
      scope = outcome.scope;
    }
    request.mcpCaller = { tenant, scope, signal };
    return undefined;
  };

  app.post<{ Params: TenantParams }>(
    '/t/:tenant/mcp',
    { onRequest: [guardRequest, admitCaller] },
    async (request, reply) => {
      const caller = request.mcpCaller;
      if (caller === null) throw new Error('admitCaller did not run');
      const response = await dispatchMcpPost(
        {
          header: (name) => headerValue(request.headers[name]),
          body: request.body,
          signal: caller.signal,
        },
        {
          server: caller.tenant.server,
          resources: caller.tenant.catalog.forScope(caller.scope),
          resourceCacheScope: 'private',
          discoverTtlMs: DISCOVER_TTL_MS,
          logger: request.log as unknown as Logger,
        },
      );
      return send(reply, response);
    },
  );

  // 2026-07-28 has no GET stream and no sessions to DELETE: "HTTP GET or
  // DELETE to the MCP endpoint: respond with 405 Method Not Allowed".
  app.route<{ Params: TenantParams }>({
    method: ['GET', 'DELETE', 'PUT', 'PATCH'],
    url: '/t/:tenant/mcp',
    onRequest: guardRequest,
    handler: async (request, reply) => {
      if (lookupTenant(tenants, request.params.tenant) === undefined)
        return send(reply, unknownTenant(request.params.tenant, null));
      reply.header('allow', 'POST');
      return send(
        reply,
        errorResponse(
          null,
          invalidRequest(`Method Not Allowed: the MCP endpoint accepts POST only, not ${request.method}`, 405),
        ),
      );
    },
  });
}

function lookupTenant(tenants: ReadonlyMap<string, TenantRuntime>, id: string): TenantRuntime | undefined {
  return TENANT_ID.test(id) ? tenants.get(id) : undefined;
}

function unknownTenant(tenantId: string, requestId: RequestId | null): McpHttpResponse {
  const shown = TENANT_ID.test(tenantId) ? `'${tenantId}'` : 'in this path';
  return errorResponse(
    requestId,
    new McpError(ErrorCode.InvalidRequest, `Unknown tenant ${shown}: no MCP endpoint here`, { httpStatus: 404 }),
  );
}

function send(reply: FastifyReply, response: McpHttpResponse): FastifyReply {
  reply.code(response.status);
  if (response.body === undefined) return reply.send();
  // Serialized by the protocol layer: a cached result's bytes, and binary contents' base64, go out as they are.
  return reply.type('application/json').send(serializeResponse(response.body));
}

/** Closing the response stream cancels the request (2026-07-28 basic/patterns/cancellation). */
function abortOnDisconnect(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new Error('client disconnected'));
  });
  return controller.signal;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  // Node joins repeated custom headers with ", ", which then fails the body comparison, as it should.
  return Array.isArray(value) ? value.join(', ') : value;
}

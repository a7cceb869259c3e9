import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AccessScope, Logger, Principal } from '@mcpgw/core';
import { errorDefinition, unrestrictedScope } from '@mcpgw/core';
import {
  dispatchMcpPost,
  errorResponse,
  serializeResponse,
  StreamedBody,
  toMcpError,
  wireError,
} from '@mcpgw/protocol';
import type { McpHttpResponse, RequestId } from '@mcpgw/protocol';
import fastifyPlugin from 'fastify-plugin';
import { MCP_ROUTE } from '../mcp-route.js';
import { createPrincipalFingerprint, createTenantPrincipalFingerprint } from '@mcpgw/tenancy';
import type { GatewayLimits } from '../plugins/limits.js';
import { tenantBusyResponse } from '../plugins/limits.js';
import { rateLimitedResponse } from '../plugins/rate-limit.js';
import { noteForLog, noteRpcResponse } from '../request-log-fields.js';
import type { ListenContext, PendingListen } from './listen-stream.js';
import { acceptListen, streamListen } from './listen-stream.js';
import { Admission } from './admission.js';
import type { TenantRegistry, TenantRuntime } from '@mcpgw/tenancy';

/** How long a client may cache `server/discover` (it changes only with configuration). */
const DISCOVER_TTL_MS = 300_000;
const TENANT_ID = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

interface McpRouteOptions {
  /** Each request holds its tenant's runtime until its response is done (a swap lets it finish). */
  tenants: TenantRegistry<TenantRuntime>;
  /** The base URL a request's Host names (see publicBaseUrls): its challenge points at that base's metadata. */
  baseUrlOf: (host: string | undefined) => string;
  /** The short, keyed fingerprint of a caller that the access line carries. */
  principalFingerprint: (principal: Principal) => string;
  /** The caller's fingerprint within the tenant (`tenantPrincipal`), the one tenant admins are shown. */
  tenantFingerprint: (tenantId: string, principal: Principal) => string;
  /** Rate limits and the per-tenant in-flight cap, checked while admitting a caller. */
  limits: GatewayLimits;
  /** Serves `subscriptions/listen`; absent, the method is -32601 and no notifications are advertised. */
  listen?: ListenContext;
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
  /** The verified caller; absent for an anonymous tenant. */
  principal: Principal | undefined;
  /** The caller's keyed fingerprint (what limits and logs count by); without a principal, their address. */
  principalKey: string;
  /** Its `release()` frees the runtime lease and the in-flight slot before the response ends (a listen stream holds neither). */
  admission: Admission;
}

declare module 'fastify' {
  interface FastifyRequest {
    mcpCaller: McpCaller | null;
  }
}

/** Serves the MCP endpoint (registerMcpRoutes) with the app's tenants, limits and listen streams. */
export const mcpRoutesPlugin = fastifyPlugin(
  async (app) => {
    const { keys, baseUrlOf } = app.settings;
    registerMcpRoutes(app, {
      tenants: app.tenants,
      baseUrlOf,
      principalFingerprint: createPrincipalFingerprint(keys.requestLogFingerprint),
      tenantFingerprint: createTenantPrincipalFingerprint(keys.tenantPrincipalFingerprint),
      limits: app.limits,
      listen: app.listenContext,
    });
  },
  {
    name: 'mcpgw-mcp-routes',
    dependencies: ['mcpgw-settings', 'mcpgw-tenants', 'mcpgw-limits', 'mcpgw-listen', 'mcpgw-error-handler'],
  },
);

/**
 * The per-tenant MCP endpoint, `POST /t/{tenant}/mcp` (2026-07-28
 * transports: one endpoint, POST only). Framework concerns live here; the
 * protocol itself is @mcpgw/protocol's `dispatchMcpPost`.
 */
function registerMcpRoutes(app: FastifyInstance, options: McpRouteOptions): void {
  const { tenants, baseUrlOf, principalFingerprint, tenantFingerprint, limits, listen } = options;
  app.decorateRequest('mcpCaller', null);

  /**
   * Who is calling, settled before the body is read: an unknown tenant or a
   * caller without valid credentials costs no JSON parsing.
   */
  const admitCaller = async (request: FastifyRequest<{ Params: TenantParams }>, reply: FastifyReply) => {
    // What the request holds, filled in as it is admitted, is freed when its connection closes.
    const admission = Admission.of(reply);
    // Per address and per tenant before any token work, so a flood costs no verification.
    const byAddress = await limits.rateLimits.checkAddress(request);
    if (byAddress !== undefined) return send(reply, rateLimitedResponse(reply, byAddress));
    // A newer revision being built is waited for: the runtime it replaces may hold a revoked grant.
    const building = TENANT_ID.test(request.params.tenant) ? tenants.whenCurrent(request.params.tenant) : undefined;
    if (building !== undefined) await building;
    const lease = TENANT_ID.test(request.params.tenant) ? tenants.acquire(request.params.tenant) : undefined;
    if (lease === undefined) return send(reply, unknownTenant(request.params.tenant, null));
    // A client that left during a count in Redis (its address's, then its tenant's) left before the
    // listener had this to free: it is freed here, and the request is cancelled before it starts.
    admission.holdLease(lease);
    const tenant = lease.runtime;
    const byTenant = await limits.rateLimits.checkTenant(request, tenant.config);
    if (byTenant !== undefined) return send(reply, rateLimitedResponse(reply, byTenant));
    const leave = limits.inFlight.enter(tenant.config.id, limits.inFlightCap(tenant.config));
    if (leave === undefined) return send(reply, tenantBusyResponse(reply));
    const controller = new AbortController();
    admission.holdSlot(leave, controller);
    const signal = controller.signal;
    let scope: AccessScope = unrestrictedScope;
    let principal: Principal | undefined;
    // Without a token (an anonymous loopback tenant) each client address counts as one caller.
    let principalKey = `anonymous ${request.ip}`;
    if (tenant.auth !== undefined) {
      const outcome = await tenant.auth.authenticate(
        { rawHeaders: request.raw.rawHeaders, url: request.url, baseUrl: baseUrlOf(request.headers.host) },
        signal,
      );
      if (!outcome.ok) {
        // An operator's first question about a 401: why. The public message never holds the token.
        request.log.info(
          {
            tenant: tenant.config.id,
            reason: outcome.reason,
            status: errorDefinition(outcome.error.code).httpStatus,
            detail: outcome.error.message,
          },
          'authentication refused',
        );
        // 401/403 carry the RFC 6750 / RFC 9728 challenge, plus a JSON-RPC body a client can show.
        reply.header('www-authenticate', outcome.challenge);
        return send(reply, errorResponse(null, toMcpError(outcome.error)));
      }
      scope = outcome.scope;
      principal = outcome.principal;
      principalKey = principalFingerprint(outcome.principal);
      noteForLog(request, {
        principal: principalKey,
        tenantPrincipal: tenantFingerprint(tenant.config.id, outcome.principal),
        ...(outcome.principal.clientId === undefined ? {} : { clientId: outcome.principal.clientId }),
      });
      const byPrincipal = await limits.rateLimits.checkPrincipal(request, tenant.config, principalKey);
      if (byPrincipal !== undefined) return send(reply, rateLimitedResponse(reply, byPrincipal));
    }
    request.mcpCaller = { tenant, scope, signal, principal, principalKey, admission };
    return undefined;
  };

  // Host and Origin were checked for every route already (requestGuardPlugin).
  app.post<{ Params: TenantParams }>(MCP_ROUTE, { onRequest: admitCaller }, async (request, reply) => {
    const caller = request.mcpCaller;
    if (caller === null) throw new Error('admitCaller did not run');
    const response = await dispatchMcpPost<PendingListen>(
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
        ...(listen === undefined ? {} : { listen: (listenRequest) => acceptListen(listenRequest, caller, listen) }),
      },
    );
    if (response.subscription !== undefined && listen !== undefined) {
      streamListen(reply, response.subscription, caller, {
        ...listen,
        admitted: () => caller.admission.release(),
        logger: request.log as unknown as Logger,
      });
      return reply;
    }
    return send(reply, response);
  });

  // 2026-07-28 has no GET stream and no sessions to DELETE: "HTTP GET or
  // DELETE to the MCP endpoint: respond with 405 Method Not Allowed".
  app.route<{ Params: TenantParams }>({
    method: ['GET', 'DELETE', 'PUT', 'PATCH'],
    url: MCP_ROUTE,
    handler: async (request, reply) => {
      if (lookupTenant(tenants.serving, request.params.tenant) === undefined)
        return send(reply, unknownTenant(request.params.tenant, null));
      reply.header('allow', 'POST');
      return send(reply, errorResponse(null, wireError('MCPGW_METHOD_NOT_ALLOWED', request.method)));
    },
  });
}

function lookupTenant(tenants: ReadonlyMap<string, TenantRuntime>, id: string): TenantRuntime | undefined {
  return TENANT_ID.test(id) ? tenants.get(id) : undefined;
}

function unknownTenant(tenantId: string, requestId: RequestId | null): McpHttpResponse {
  const shown = TENANT_ID.test(tenantId) ? `'${tenantId}'` : 'in this path';
  return errorResponse(requestId, wireError('MCPGW_TENANT_UNKNOWN', shown));
}

function send(reply: FastifyReply, response: McpHttpResponse<unknown>): FastifyReply {
  noteRpcResponse(reply.request, response.body);
  reply.code(response.status);
  if (response.body === undefined) return reply.send();
  // Serialized by the protocol layer: a cached result's bytes, and binary contents' base64, go out as they are.
  const body = serializeResponse(response.body);
  if (!(body instanceof StreamedBody)) return reply.type('application/json').send(body);
  // A blob still arriving from its backend: its length is known, its bytes are written as they come. Should
  // the backend fail midway, Fastify destroys the connection: the client gets fewer bytes than Content-Length
  // (a transport error), never a complete-looking document. Before the first byte it is an error response.
  return reply.type('application/json').header('content-length', body.byteLength).send(body.stream);
}

function headerValue(value: string | string[] | undefined): string | undefined {
  // Node joins repeated custom headers with ", ", which then fails the body comparison, as it should.
  return Array.isArray(value) ? value.join(', ') : value;
}

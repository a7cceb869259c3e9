import type { FastifyInstance } from 'fastify';
import { isLoopbackHost } from '@mcpgw/config';
import { errorResponse, wireError } from '@mcpgw/protocol';
import { noteRpcResponse } from './request-log.js';

/**
 * DNS-rebinding protection (2026-07-28 transports, Security & Endpoint:
 * "Servers MUST validate the Origin header on all incoming connections").
 * A rebinding page reaches a loopback server under the attacker's host name,
 * so both `Host` and, when present, `Origin` must name this gateway.
 */
export interface RequestGuardOptions {
  /** HOST the gateway binds to. */
  bindHost: string;
  /** PUBLIC_URL, when configured. */
  publicUrl: string | undefined;
  /** ALLOWED_ORIGINS. */
  allowedOrigins: readonly string[];
  /** Routes that authenticate every request themselves and are reached by address (`/metrics` with METRICS_TOKEN). */
  unguardedRoutes?: readonly string[];
}

export type GuardVerdict = { ok: true } | { ok: false; reason: string };

/** The MCP endpoint's route, whose refusals are JSON-RPC errors. */
export const MCP_ROUTE = '/t/:tenant/mcp';

/**
 * Puts the Host/Origin check in front of every route, not only the MCP
 * endpoint: the development authorization server (registration, sign-in),
 * the well-known documents and the probes are as reachable by a rebinding
 * page as `/t/{tenant}/mcp` is. A refusal is 403 before any handler runs; the
 * MCP endpoint's is a JSON-RPC error (transports: "If the Origin header is
 * present and invalid, servers MUST respond with HTTP 403 Forbidden"), the
 * other routes' an OAuth-style JSON error. Probes must therefore send a Host
 * this gateway answers to (PUBLIC_URL's, or a loopback name on a loopback bind).
 */
export function installRequestGuard(app: FastifyInstance, options: RequestGuardOptions): void {
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
}

/** The Host/Origin decision alone, for one request's headers. */
export function createRequestGuard(
  options: RequestGuardOptions,
): (host: string | undefined, origin: string | undefined) => GuardVerdict {
  const loopbackBind = isLoopbackHost(options.bindHost);
  const publicHost = options.publicUrl === undefined ? undefined : new URL(options.publicUrl).host;
  const origins = new Set(options.allowedOrigins);
  if (options.publicUrl !== undefined) origins.add(new URL(options.publicUrl).origin);

  const hostAllowed = (host: string): boolean => {
    if (host === publicHost) return true;
    // On a loopback bind, any loopback name and port reaches only this machine.
    return loopbackBind && isLoopbackHost(hostnameOf(host));
  };

  const originAllowed = (origin: string): boolean => {
    if (origins.has(origin)) return true;
    try {
      const url = new URL(origin);
      return loopbackBind && url.origin === origin && isLoopbackHost(url.hostname);
    } catch {
      return false;
    }
  };

  return (host, origin) => {
    if (host === undefined || !hostAllowed(host.toLowerCase())) {
      return { ok: false, reason: 'Forbidden: the Host header does not name this gateway' };
    }
    if (origin !== undefined && !originAllowed(origin)) {
      return { ok: false, reason: 'Forbidden: this Origin is not allowed (see ALLOWED_ORIGINS)' };
    }
    return { ok: true };
  };
}

/** `example.com:8080` → `example.com`; `[::1]:80` → `::1`. */
function hostnameOf(host: string): string {
  if (host.startsWith('[')) return host.slice(1, host.indexOf(']'));
  const colon = host.lastIndexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}

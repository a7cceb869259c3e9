import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { GatewayMetrics } from '../observability/gateway-metrics.js';
import { MCP_ROUTE } from '../mcp-route.js';

/** Where Prometheus scrapes. */
export const METRICS_ROUTE = '/metrics';

/**
 * The MCP methods a `method` label may name (both eras, served or not); any
 * other string a client sends counts as `other`, so a client cannot mint series.
 */
const KNOWN_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'notifications/initialized',
  'notifications/cancelled',
  'ping',
  'logging/setLevel',
  'server/discover',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'subscriptions/listen',
]);

/** HTTP refusals that are the HTTP layer's, whatever body they carry: rate limiting and load shedding. */
const HTTP_LAYER_STATUS: ReadonlySet<number> = new Set([429, 503]);

/** The `method` label of a request: the body's `method`, else the 2026-07-28 `Mcp-Method` header. */
export function methodLabel(request: FastifyRequest): string {
  const fromBody = (request.body as { method?: unknown } | undefined)?.method;
  const method = typeof fromBody === 'string' ? fromBody : request.headers['mcp-method'];
  return typeof method === 'string' && KNOWN_METHODS.has(method) ? method : 'other';
}

/**
 * The `outcome` label: `http_<status>` for a request refused before its
 * JSON-RPC message was handled (unknown tenant, authentication, Host/Origin,
 * rate limits, shedding), else the JSON-RPC error code of the response, else `ok`.
 */
export function outcomeLabel(request: FastifyRequest, status: number): string {
  const admitted = request.mcpCaller !== null;
  if (HTTP_LAYER_STATUS.has(status) || (!admitted && status >= 400)) return `http_${status}`;
  const rpcError = request.mcpLog?.rpcError;
  if (rpcError !== undefined) return String(rpcError);
  return status < 400 ? 'ok' : `http_${status}`;
}

/**
 * Counts every response of the MCP endpoint in `mcpgw_requests_total` and
 * `mcpgw_request_duration_seconds`. `isServedTenant` bounds the tenant label
 * to configured tenants; anything else is `unknown`.
 */
export function installRequestMetrics(
  app: FastifyInstance,
  options: { metrics: GatewayMetrics; isServedTenant: (id: string) => boolean },
): { listenAcknowledged: (request: FastifyRequest, seconds: number) => void } {
  const { metrics, isServedTenant } = options;
  const finished = (request: FastifyRequest, status: number, seconds: number) => {
    const tenantId = (request.params as { tenant?: unknown }).tenant;
    const tenant = typeof tenantId === 'string' && isServedTenant(tenantId) ? tenantId : 'unknown';
    metrics.requestFinished(tenant, methodLabel(request), outcomeLabel(request, status), seconds);
  };
  app.addHook('onResponse', async (request, reply) => {
    if (request.routeOptions.url !== MCP_ROUTE) return;
    // A listen stream was counted when it was acknowledged (its latency is the time to open it);
    // its lifetime, minutes or days, belongs to the mcpgw_listen_streams gauge, not the histogram.
    if (String(reply.raw.getHeader('content-type') ?? '').startsWith('text/event-stream')) return;
    finished(request, reply.statusCode, reply.elapsedTime / 1000);
  });
  return { listenAcknowledged: (request, seconds) => finished(request, 200, seconds) };
}

export interface MetricsRouteOptions {
  metrics: GatewayMetrics;
  /** METRICS_TOKEN. */
  token: string | undefined;
  /** Whether HOST is a loopback address. */
  loopbackBind: boolean;
}

/**
 * Whether `/metrics` exists at all: with METRICS_TOKEN, always (the token is
 * required); without it, only on a loopback bind, where only this machine
 * can scrape. Off loopback without a token there is no route (404): metrics
 * name tenants and sources, which are not for everyone who can reach the port.
 */
export function metricsRouteEnabled(options: Pick<MetricsRouteOptions, 'token' | 'loopbackBind'>): boolean {
  return options.token !== undefined || options.loopbackBind;
}

/**
 * `GET /metrics` in Prometheus' text exposition format. With a token, the
 * request must carry `Authorization: Bearer <token>` (RFC 6750 §2.1), compared
 * in constant time over SHA-256 digests so neither the token's bytes nor its
 * length leak through timing; anything else is 401 with a Bearer challenge
 * (RFC 6750 §3).
 */
export function registerMetricsRoute(app: FastifyInstance, options: MetricsRouteOptions): void {
  if (!metricsRouteEnabled(options)) return;
  const expected = options.token === undefined ? undefined : digest(options.token);
  app.get(METRICS_ROUTE, async (request, reply) => {
    if (expected !== undefined) {
      // RFC 7235 §2.1: the scheme is case-insensitive.
      const sent = /^bearer +(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
      if (sent === undefined || !timingSafeEqual(digest(sent), expected)) {
        return reply
          .code(401)
          .header('www-authenticate', 'Bearer realm="metrics"')
          .header('cache-control', 'no-store')
          .type('application/json')
          .send({ error: 'unauthorized', error_description: 'A valid metrics bearer token is required' });
      }
    }
    const body = await options.metrics.registry.metrics();
    return reply.header('cache-control', 'no-store').type(options.metrics.registry.contentType).send(body);
  });
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

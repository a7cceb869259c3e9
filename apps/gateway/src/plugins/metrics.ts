import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { AccessActivity, TenantTraffic } from '@mcpgw/cache';
import { accessEntryOf } from '../observability/access-entry.js';
import { isLoopbackHost } from '@mcpgw/config';
import type { GatewayMetrics } from '../observability/gateway-metrics.js';
import { createGatewayMetrics } from '../observability/gateway-metrics.js';
import { MCP_ROUTE } from '../mcp-route.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Prometheus metrics (docs/operations.md, "Metric contract"); plugins count rate limiting and shedding here. */
    metrics: GatewayMetrics;
    /** Counts MCP requests (`mcpgw_requests_total`); a listen stream is counted once acknowledged. */
    requestMetrics: RequestMetrics;
  }
}

/** What the listen route tells the request metrics. */
export interface RequestMetrics {
  /** Counts an acknowledged listen request like a finished request, its latency the time to open it. */
  listenAcknowledged(request: FastifyRequest, seconds: number): void;
}

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
function installRequestMetrics(
  app: FastifyInstance,
  options: {
    metrics: GatewayMetrics;
    isServedTenant: (id: string) => boolean;
    traffic: TenantTraffic;
    access: AccessActivity;
  },
): RequestMetrics {
  const { metrics, isServedTenant, traffic, access } = options;
  const finished = (request: FastifyRequest, status: number, seconds: number) => {
    const tenantId = (request.params as { tenant?: unknown }).tenant;
    const tenant = typeof tenantId === 'string' && isServedTenant(tenantId) ? tenantId : 'unknown';
    const outcome = outcomeLabel(request, status);
    const method = methodLabel(request);
    metrics.requestFinished(tenant, method, outcome, seconds);
    // The console's per-tenant charts: an error is any outcome but ok (refusals and JSON-RPC errors alike).
    if (tenant === tenantId) traffic.recordRequest(tenant, { error: outcome !== 'ok', latencyMs: seconds * 1000 });
    if (tenant === tenantId && outcome === 'ok') {
      const entry = accessEntryOf(request, method);
      if (entry !== undefined) access.record(tenant, entry);
    }
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
function registerMetricsRoute(app: FastifyInstance, options: MetricsRouteOptions): void {
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

/**
 * Decorates `app.metrics` before the plugins that count into it, and serves
 * `GET /metrics` (metricsRouteEnabled). Readings taken at scrape time come
 * from their owners (GatewayMetrics.readFrom).
 */
export const metricsPlugin = fastifyPlugin(
  async (app) => {
    const metrics = createGatewayMetrics();
    app.decorate('metrics', metrics);
    const { env } = app.settings.config;
    registerMetricsRoute(app, { metrics, token: env.METRICS_TOKEN, loopbackBind: isLoopbackHost(env.HOST) });
  },
  { name: 'mcpgw-metrics', dependencies: ['mcpgw-settings'] },
);

/**
 * Counts every response of the MCP endpoint, and times it in a span when
 * tracing is on. After the tenants: the `tenant` label names a served tenant
 * or `unknown`, so a client cannot mint series.
 */
export const requestObservationPlugin = fastifyPlugin(
  async (app) => {
    const isServedTenant = (id: string) => app.tenants.serving.has(id);
    app.decorate(
      'requestMetrics',
      installRequestMetrics(app, {
        metrics: app.metrics,
        isServedTenant,
        traffic: app.tenantTraffic,
        access: app.accessActivity,
      }),
    );
    app.tracing?.install(app, { isServedTenant });
  },
  {
    name: 'mcpgw-request-observation',
    dependencies: ['mcpgw-metrics', 'mcpgw-tracing', 'mcpgw-tenants', 'mcpgw-traffic'],
  },
);

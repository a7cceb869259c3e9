import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { IntrospectionOutcome, JwksFetchOutcome } from '@mcpgw/auth';

/** Why a request was refused with 429 (the `scope` label of `mcpgw_rate_limited_total`). */
export type RateLimitScope = 'ip' | 'tenant' | 'principal';

/** A cache layer as the metric contract names it: a source's backend pages, or a caller's finished result. */
export type CacheLayerLabel = 'catalog' | 'result';
/** What one cache lookup did. */
export type CacheResultLabel = 'hit' | 'miss' | 'error' | 'bypass';

/** One source's last health probe, for `mcpgw_source_up`. */
export interface SourceUp {
  tenant: string;
  source: string;
  up: boolean;
}

/** What the gateway reads at scrape time rather than counting as it goes. */
export interface MetricsReaders {
  /** Cumulative cache counters, summed over tenants. */
  cacheOperations(): Iterable<{ layer: CacheLayerLabel; result: CacheResultLabel; count: number }>;
  /** True while the Redis circuit breaker is open. */
  redisCircuitOpen(): boolean;
  /** The last health probe of every source of every served tenant. */
  sourcesUp(): Iterable<SourceUp>;
}

/**
 * The gateway's Prometheus metrics (the metric contract of
 * docs/operations.md): one registry per app, so that several apps in one
 * process (tests) never share counters. Label values are bounded by the
 * callers: tenant ids are configured ones or `unknown`, methods known MCP
 * methods or `other`, never a URI, subject or token.
 *
 * Plugins count through `app.metrics` (a Fastify decorator set before any
 * plugin is installed): rate limiting calls `rateLimited(scope)`, load
 * shedding `shed()`, a listen stream `listenStreamOpened()`.
 */
export interface GatewayMetrics {
  /** Serialize with `registry.metrics()`; `registry.contentType` is the exposition format's media type. */
  readonly registry: Registry;
  /** An MCP request's response is done. `outcome`: `ok`, a JSON-RPC code, or `http_<status>`. */
  requestFinished(tenant: string, method: string, outcome: string, seconds: number): void;
  /** A source called its backend (a cache miss or an uncached call). */
  backendCall(sourceType: string, seconds: number, failed: boolean): void;
  jwksFetched(outcome: JwksFetchOutcome): void;
  introspected(outcome: IntrospectionOutcome): void;
  /** A request was refused with 429. */
  rateLimited(scope: RateLimitScope): void;
  /** A request was refused with 503 by load shedding. */
  shed(): void;
  /** A listen stream opened; call the returned function once when it closes. */
  listenStreamOpened(): () => void;
  /**
   * Where the scrape-time metrics come from, given by the plugin that owns
   * each: the cache plugin its counters and circuit, the health plugin its
   * last probes. Until given, they read as zero and empty.
   */
  readFrom(readers: Partial<MetricsReaders>): void;
}

/** Seconds; from a cached answer (well under 5 ms) to the 30 s request timeout. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

let processMetrics: Registry | undefined;

/**
 * prom-client's default metrics (nodejs_eventloop_lag_seconds among them)
 * describe the process, so they are collected once per process: each call of
 * collectDefaultMetrics starts its own event-loop monitor and GC observer,
 * which nothing stops, and tests build many apps in one process.
 */
function processRegistry(): Registry {
  if (processMetrics === undefined) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics });
  }
  return processMetrics;
}

/** Creates the registry with every contract metric, each present from the first scrape. */
export function createGatewayMetrics(): GatewayMetrics {
  const readers: MetricsReaders = { cacheOperations: () => [], redisCircuitOpen: () => false, sourcesUp: () => [] };
  const own = new Registry();
  const registers = [own];

  const requests = new Counter({
    name: 'mcpgw_requests_total',
    help: 'MCP requests answered, by tenant, MCP method and outcome (ok, JSON-RPC error code, or http_<status>)',
    labelNames: ['tenant', 'method', 'outcome'] as const,
    registers,
  });
  const requestDuration = new Histogram({
    name: 'mcpgw_request_duration_seconds',
    help: "Time from a request's arrival to the end of its response",
    labelNames: ['tenant', 'method'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  new Counter({
    name: 'mcpgw_cache_operations_total',
    help: 'Cache lookups by layer (catalog, result) and result (hit, miss, error, bypass)',
    labelNames: ['layer', 'result'] as const,
    registers,
    collect() {
      // The cache keeps its own cumulative counters (packages stay free of metric libraries).
      this.reset();
      for (const { layer, result, count } of readers.cacheOperations()) this.inc({ layer, result }, count);
    },
  });
  const backendDuration = new Histogram({
    name: 'mcpgw_backend_duration_seconds',
    help: 'One call of a source to its backend, by source type',
    labelNames: ['source_type'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const backendErrors = new Counter({
    name: 'mcpgw_backend_errors_total',
    help: 'Backend calls that failed or timed out, by source type',
    labelNames: ['source_type'] as const,
    registers,
  });
  new Gauge({
    name: 'mcpgw_source_up',
    help: "1 when the source's last health probe answered, else 0",
    labelNames: ['tenant', 'source'] as const,
    registers,
    collect() {
      // Rebuilt at every scrape, so a removed tenant or source leaves no stale series.
      this.reset();
      for (const { tenant, source, up } of readers.sourcesUp()) this.set({ tenant, source }, up ? 1 : 0);
    },
  });
  new Gauge({
    name: 'mcpgw_redis_circuit_open',
    help: '1 while the Redis circuit breaker is open (the replica serves uncached)',
    registers,
    collect() {
      this.set(readers.redisCircuitOpen() ? 1 : 0);
    },
  });
  const jwks = new Counter({
    name: 'mcpgw_jwks_fetches_total',
    help: 'JWKS fetches from issuers, by outcome (ok, error)',
    labelNames: ['outcome'] as const,
    registers,
  });
  const introspection = new Counter({
    name: 'mcpgw_introspection_requests_total',
    help: 'RFC 7662 introspection calls (not cached answers), by outcome (active, inactive, error)',
    labelNames: ['outcome'] as const,
    registers,
  });
  const listenStreams = new Gauge({
    name: 'mcpgw_listen_streams',
    help: 'Response streams held open for change notifications',
    registers,
  });
  const rateLimited = new Counter({
    name: 'mcpgw_rate_limited_total',
    help: 'Requests refused with 429, by limit scope (ip, tenant, principal)',
    labelNames: ['scope'] as const,
    registers,
  });
  const shed = new Counter({ name: 'mcpgw_shed_total', help: 'Requests refused with 503 by load shedding', registers });

  // Series a dashboard sums over exist from the start, at 0.
  for (const outcome of ['ok', 'error'] as const) jwks.inc({ outcome }, 0);
  for (const outcome of ['active', 'inactive', 'error'] as const) introspection.inc({ outcome }, 0);
  for (const scope of ['ip', 'tenant', 'principal'] as const) rateLimited.inc({ scope }, 0);
  listenStreams.set(0);

  return {
    // The app's own metrics (per app, so several apps in one process never share counters) and the process's.
    registry: Registry.merge([own, processRegistry()]),
    requestFinished(tenant, method, outcome, seconds) {
      requests.inc({ tenant, method, outcome });
      requestDuration.observe({ tenant, method }, seconds);
    },
    backendCall(sourceType, seconds, failed) {
      backendDuration.observe({ source_type: sourceType }, seconds);
      // Incremented by 0 on success, so the error series exists (and error ratios read 0, not "no data").
      backendErrors.inc({ source_type: sourceType }, failed ? 1 : 0);
    },
    jwksFetched: (outcome) => jwks.inc({ outcome }),
    introspected: (outcome) => introspection.inc({ outcome }),
    rateLimited: (scope) => rateLimited.inc({ scope }),
    shed: () => shed.inc(),
    listenStreamOpened() {
      listenStreams.inc();
      let open = true;
      return () => {
        if (!open) return;
        open = false;
        listenStreams.dec();
      };
    },
    readFrom: (given) => Object.assign(readers, given),
  };
}

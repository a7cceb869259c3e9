import type { FastifyInstance, FastifyReply } from 'fastify';
import type { EnvConfig, TenantConfig } from '@mcpgw/config';
import type { RedisConnection } from '@mcpgw/cache';
import type { Logger } from '@mcpgw/core';
import { errorResponse, wireError } from '@mcpgw/protocol';
import type { McpHttpResponse } from '@mcpgw/protocol';
import type { TenantInFlight } from '@mcpgw/tenancy';
import { createTenantInFlight } from '@mcpgw/tenancy';
import type { LoadShedding } from './load-shedding.js';
import { installLoadShedding } from './load-shedding.js';
import type { RateLimits, RateLimitScope } from './rate-limit.js';
import { installRateLimits } from './rate-limit.js';

/** Rate limits, the per-tenant bulkhead and load shedding, as the MCP route and a metrics module see them. */
export interface GatewayLimits {
  rateLimits: RateLimits;
  inFlight: TenantInFlight;
  shedding: LoadShedding;
  /** The tenant's in-flight cap: its own `limits.maxInFlight`, else TENANT_MAX_IN_FLIGHT; 0 is none. */
  inFlightCap(tenant: TenantConfig): number;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Refusal counters live here: `rateLimits.refused`, `inFlight.refused`, `shedding.shed`. */
    limits: GatewayLimits;
  }
}

/**
 * Where refusals are counted as they happen. Its shape is the metrics
 * module's (`app.metrics`: `mcpgw_rate_limited_total{scope}`,
 * `mcpgw_shed_total`), so that object can be passed as it is.
 */
export interface LimitsObserver {
  rateLimited(scope: RateLimitScope): void;
  /** A 503: load shedding, or a tenant at its in-flight cap. */
  shed(): void;
}

export interface LimitsOptions {
  env: EnvConfig;
  logger: Logger;
  observe?: LimitsObserver;
  /** The process's Redis connection, shared by the rate-limit counters (see RateLimitOptions.redis). */
  redis?: RedisConnection | undefined;
  /** Redis key prefix for the rate-limit counters (tests use their own namespace). */
  redisPrefix?: string;
  /** Deadline of one Redis count (tests on a busy machine raise it). */
  redisCommandTimeoutMs?: number;
  /** Event-loop sampling period for load shedding (tests shorten it). */
  sampleIntervalMs?: number;
}

/** Installs every limit (docs/operations.md, "Limits and overload") and decorates `app.limits`. */
export async function installLimits(app: FastifyInstance, options: LimitsOptions): Promise<GatewayLimits> {
  const { env, logger, observe } = options;
  const limits: GatewayLimits = {
    shedding: await installLoadShedding(app, {
      env,
      ...(observe === undefined ? {} : { onShed: () => observe.shed() }),
      ...(options.sampleIntervalMs === undefined ? {} : { sampleIntervalMs: options.sampleIntervalMs }),
    }),
    rateLimits: await installRateLimits(app, {
      env,
      logger,
      redis: options.redis,
      ...(observe === undefined ? {} : { onRefused: (scope: RateLimitScope) => observe.rateLimited(scope) }),
      ...(options.redisPrefix === undefined ? {} : { redisPrefix: options.redisPrefix }),
      ...(options.redisCommandTimeoutMs === undefined ? {} : { redisCommandTimeoutMs: options.redisCommandTimeoutMs }),
    }),
    inFlight: createTenantInFlight(() => observe?.shed()),
    inFlightCap: (tenant) => tenant.limits?.maxInFlight ?? env.TENANT_MAX_IN_FLIGHT,
  };
  app.decorate('limits', limits);
  return limits;
}

/** Retry-After for a tenant at its in-flight cap: its requests finish or time out within seconds. */
const TENANT_BUSY_RETRY_AFTER_SECONDS = 1;

/**
 * The 503's JSON-RPC answer never varies, so it is built once: a refusal,
 * which a tenant whose backend hangs causes by the hundred per second, costs
 * no error object (nor its stack trace) of its own. Read-only from here on.
 */
const TENANT_BUSY: McpHttpResponse = errorResponse(
  null,
  wireError('MCPGW_OVERLOADED', [
    'too many requests of this tenant in flight',
    String(TENANT_BUSY_RETRY_AFTER_SECONDS),
  ]),
);

/** The 503 for a tenant at its in-flight cap (RFC 9110 section 15.6.4), with Retry-After and a JSON-RPC body. */
export function tenantBusyResponse(reply: FastifyReply): McpHttpResponse {
  reply.header('retry-after', String(TENANT_BUSY_RETRY_AFTER_SECONDS));
  return TENANT_BUSY;
}

import type { FastifyReply } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { RateCounter } from '@mcpgw/cache';
import type { TenantConfig } from '@mcpgw/config';
import { errorResponse, wireError } from '@mcpgw/protocol';
import type { McpHttpResponse } from '@mcpgw/protocol';
import type { TenantInFlight } from '@mcpgw/tenancy';
import { createTenantInFlight } from '@mcpgw/tenancy';
import type { LoadShedding } from './load-shedding.js';
import { installLoadShedding } from './load-shedding.js';
import type { RateLimits } from './rate-limit.js';
import { createRateLimits } from './rate-limit.js';

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

export interface LimitsOptions {
  /** The rate-limit counters every replica shares, which the caller closes; default: Redis at REDIS_URL. */
  rateCounter?: RateCounter | undefined;
}

/**
 * Installs every limit (docs/operations.md, "Limits and overload"),
 * decorates `app.limits` and counts refusals in `app.metrics`
 * (`mcpgw_rate_limited_total{scope}`, `mcpgw_shed_total`).
 */
export const limitsPlugin = fastifyPlugin<LimitsOptions>(
  async (app, options) => {
    const { env } = app.settings.config;
    const logger = app.settings.logger.child({ component: 'limits' });
    const { metrics } = app;
    const rateLimits = await createRateLimits({
      env,
      logger,
      onRefused: (scope) => metrics.rateLimited(scope),
      shared: options.rateCounter,
      redis: app.redis,
      tenantTag: app.settings.tenantTag,
    });
    app.addHook('onClose', async () => rateLimits.close());
    app.decorate('limits', {
      shedding: await installLoadShedding(app, { env, onShed: () => metrics.shed() }),
      rateLimits,
      inFlight: createTenantInFlight(() => metrics.shed()),
      inFlightCap: (tenant) => tenant.limits?.maxInFlight ?? env.TENANT_MAX_IN_FLIGHT,
    } satisfies GatewayLimits);
  },
  { name: 'mcpgw-limits', dependencies: ['mcpgw-settings', 'mcpgw-metrics', 'mcpgw-redis'] },
);

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

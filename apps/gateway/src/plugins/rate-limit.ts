import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RateCounter, RedisConnection, WindowCount } from '@mcpgw/cache';
import { batchRateCounter, createMemoryRateCounter, createRedisRateCounter, withFallbackCounter } from '@mcpgw/cache';
import type { EnvConfig, TenantConfig } from '@mcpgw/config';
import { isLoopbackHost } from '@mcpgw/config';
import type { Logger } from '@mcpgw/core';
import { errorResponse, wireError } from '@mcpgw/protocol';
import type { McpHttpResponse } from '@mcpgw/protocol';

/** Which limit refused: the client address, the tenant as a whole, or one authenticated caller. */
export type RateLimitScope = 'ip' | 'tenant' | 'principal';

/** Every limit counts requests in a fixed one-minute window. */
const WINDOW_MS = 60_000;

/** A request over one of its limits. */
export interface RateLimitRefusal {
  scope: RateLimitScope;
  /** Whole seconds until the window resets (Retry-After, RFC 9110 section 10.2.3). */
  retryAfterSeconds: number;
}

/** The three checks, in the order the MCP route runs them. */
export interface RateLimits {
  /** Per client address; runs before the tenant is looked up or a token is read. */
  checkAddress(request: FastifyRequest): Promise<RateLimitRefusal | undefined>;
  /** Per tenant, all callers together; still before any token work. */
  checkTenant(request: FastifyRequest, tenant: TenantConfig): Promise<RateLimitRefusal | undefined>;
  /** Per authenticated caller: `principalKey` is its keyed fingerprint, never the subject or token. */
  checkPrincipal(
    request: FastifyRequest,
    tenant: TenantConfig,
    principalKey: string,
  ): Promise<RateLimitRefusal | undefined>;
  /** The admin API's per-address limit (RATE_LIMIT_ADMIN_IP_PER_MINUTE); runs before any token is verified. */
  checkAdminAddress(request: FastifyRequest): Promise<RateLimitRefusal | undefined>;
  /** The admin API's per-caller limit (RATE_LIMIT_ADMIN_PER_MINUTE): `principalKey` is a keyed fingerprint. */
  checkAdminPrincipal(request: FastifyRequest, principalKey: string): Promise<RateLimitRefusal | undefined>;
  /** Requests refused so far, by scope (a metrics module can read these). */
  readonly refused: Readonly<Record<RateLimitScope, number>>;
  /** Drops a deleted tenant's counters (its own and its callers'), in Redis and in process. */
  forgetTenant(tenantId: string): Promise<void>;
}

export interface RateLimitOptions {
  env: Pick<
    EnvConfig,
    | 'REDIS_URL'
    | 'RATE_LIMIT_IP_PER_MINUTE'
    | 'RATE_LIMIT_TENANT_PER_MINUTE'
    | 'RATE_LIMIT_PRINCIPAL_PER_MINUTE'
    | 'RATE_LIMIT_ADMIN_IP_PER_MINUTE'
    | 'RATE_LIMIT_ADMIN_PER_MINUTE'
    | 'TRUSTED_PROXIES'
  >;
  logger: Logger;
  /** Called for each refused request (metrics). */
  onRefused?: (scope: RateLimitScope) => void;
  /**
   * The counters every replica shares, which its caller closes; absent: Redis
   * on `redis` under `mcpgw:rl:`, or none.
   */
  shared?: RateCounter | undefined;
  /** The process's Redis connection (redisPlugin), when REDIS_URL is set. */
  redis?: RedisConnection | undefined;
  /**
   * The tenant's keyed tag (`CacheKeys.tenantTag`), which names the tenant in
   * counter keys: Redis holds no tenant id in the clear, as for every other
   * key the gateway writes there.
   */
  tenantTag(tenantId: string): string;
}

interface Subject {
  scope: RateLimitScope;
  key: string;
  limit: number;
}

/**
 * Counts each check in a fixed one-minute window: in Redis when REDIS_URL is
 * set (or a shared counter is given), so every replica sees one count, and
 * in this process whenever Redis fails, so a Redis outage never fails a
 * request. While a key is below half its limit, other replicas' counts reach
 * this one up to 200 ms late (batchRateCounter); from half on, and for limits
 * under 100 a minute, every request is counted in Redis before it is decided. The counting is ours rather than `@fastify/rate-limit`'s: the MCP
 * route runs three checks at three points of admission (before the tenant,
 * before the token, after it), each with its own key and limit, and the
 * plugin's Redis store turns an outage into errors, so all it added was a
 * wrapper over these counters.
 *
 * The client address is `request.ip`: the connection's peer, or, when
 * TRUSTED_PROXIES names the peer, the nearest X-Forwarded-For hop that is not
 * a trusted proxy (Fastify's `trustProxy`, set from the same list in app.ts).
 *
 * The gateway-wide defaults (RATE_LIMIT_*, the admin API's included) exempt
 * loopback peers, so local tools, tests and benchmarks are never throttled by
 * accident, but only while no proxy is configured: behind a same-host proxy
 * or sidecar every caller arrives from loopback, and with TRUSTED_PROXIES set
 * the address is the client's, whatever it is. A tenant's own `limits` apply
 * to every caller.
 */
export async function createRateLimits(options: RateLimitOptions): Promise<RateLimits & { close(): Promise<void> }> {
  const { env, logger } = options;
  const local = createMemoryRateCounter();
  let warned = false;
  // On the process's Redis connection (redisPlugin), which was waited for once at start.
  const shared =
    options.shared ??
    (options.redis === undefined ? undefined : createRedisRateCounter({ redis: options.redis, prefix: 'mcpgw:rl:' }));
  // Far below its limit a key is counted in process and sent to Redis every 200 ms (batchRateCounter):
  // two Redis round trips per request were a third of a cached listing's CPU.
  const batched = shared === undefined ? undefined : batchRateCounter(shared);
  const counter: RateCounter =
    batched === undefined
      ? local
      : withFallbackCounter(batched, local, (error) => {
          // Once per outage is enough for the log; the counters keep working.
          if (warned) return;
          warned = true;
          logger.warn({ err: { message: (error as Error).message } }, 'rate limits count in process while Redis fails');
        });

  const refused: Record<RateLimitScope, number> = { ip: 0, tenant: 0, principal: 0 };

  const run = async (subject: Subject): Promise<RateLimitRefusal | undefined> => {
    if (subject.limit === 0) return undefined;
    let count: WindowCount;
    try {
      count = await counter.increment(`${subject.scope}:${subject.key}`, WINDOW_MS, 1, subject.limit);
      warned = false;
    } catch {
      // Both counters failed (the in-process one cannot, short of a bug): a limit never fails a request.
      return undefined;
    }
    if (count.current <= subject.limit) return undefined;
    refused[subject.scope] += 1;
    options.onRefused?.(subject.scope);
    return { scope: subject.scope, retryAfterSeconds: Math.max(1, Math.ceil(count.ttlMs / 1000)) };
  };
  const exempt = (request: FastifyRequest): boolean =>
    env.TRUSTED_PROXIES.length === 0 && isLoopbackAddress(request.ip);
  /** A tenant's own limit, else the default unless the peer is exempt. */
  const limitOf = (request: FastifyRequest, own: number | undefined, fallback: number) =>
    own ?? (exempt(request) ? 0 : fallback);

  return {
    checkAddress: (request) =>
      run({
        scope: 'ip',
        key: request.ip,
        limit: exempt(request) ? 0 : env.RATE_LIMIT_IP_PER_MINUTE,
      }),
    checkTenant: (request, tenant) =>
      run({
        scope: 'tenant',
        key: options.tenantTag(tenant.id),
        limit: limitOf(request, tenant.limits?.requestsPerMinute, env.RATE_LIMIT_TENANT_PER_MINUTE),
      }),
    checkPrincipal: (request, tenant, principalKey) =>
      run({
        scope: 'principal',
        key: `${options.tenantTag(tenant.id)}:${principalKey}`,
        limit: limitOf(request, tenant.limits?.perPrincipalPerMinute, env.RATE_LIMIT_PRINCIPAL_PER_MINUTE),
      }),
    // Keys of their own ("admin:"), so the admin API's counts never eat into the MCP endpoint's.
    checkAdminAddress: (request) =>
      run({
        scope: 'ip',
        key: `admin:${request.ip}`,
        limit: exempt(request) ? 0 : env.RATE_LIMIT_ADMIN_IP_PER_MINUTE,
      }),
    checkAdminPrincipal: (request, principalKey) =>
      run({
        scope: 'principal',
        key: `admin:${principalKey}`,
        limit: exempt(request) ? 0 : env.RATE_LIMIT_ADMIN_PER_MINUTE,
      }),
    refused,
    forgetTenant: (tenantId) => {
      const tag = options.tenantTag(tenantId);
      return counter.forget([`tenant:${tag}`], [`principal:${tag}:`]);
    },
    // A given shared counter stays its owner's: what is counted and not sent yet goes to it first.
    close: async () => {
      if (options.shared === undefined) return counter.close();
      await batched?.flush();
      await local.close();
    },
  };
}

/** A peer on this host: 127.0.0.0/8, ::1, or either mapped into IPv6. */
function isLoopbackAddress(ip: string): boolean {
  return isLoopbackHost(ip.replace(/^::ffff:/i, ''));
}

const SCOPE_NAMES: Record<RateLimitScope, string> = {
  ip: 'per client address',
  tenant: 'per tenant',
  principal: 'per caller',
};

/** The 429 for a refusal: Retry-After (RFC 6585 section 4) and a JSON-RPC error body. */
export function rateLimitedResponse(reply: FastifyReply, refusal: RateLimitRefusal): McpHttpResponse {
  reply.header('retry-after', String(refusal.retryAfterSeconds));
  return errorResponse(
    null,
    wireError('MCPGW_RATE_LIMITED', [SCOPE_NAMES[refusal.scope], String(refusal.retryAfterSeconds)]),
  );
}

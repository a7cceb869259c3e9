import fastifyRateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RateCounter, RedisConnection } from '@mcpgw/cache';
import { createMemoryRateCounter, createRedisRateCounter, withFallbackCounter } from '@mcpgw/cache';
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
  /** The process's Redis connection (app.ts opens it with REDIS_URL and waits for it once); else one of its own. */
  redis?: RedisConnection | undefined;
  /** Called for each refused request (metrics). */
  onRefused?: (scope: RateLimitScope) => void;
  /** Redis key prefix; tests pass their own namespace. Default `mcpgw:rl:`. */
  redisPrefix?: string;
  /** Deadline of one Redis count before counting in process instead. Default 50 ms; tests on a busy machine raise it. */
  redisCommandTimeoutMs?: number;
}

interface Subject {
  scope: RateLimitScope;
  key: string;
  limit: number;
}

/**
 * Registers @fastify/rate-limit (not globally: the MCP route runs each check
 * where it belongs) over a store that counts in Redis when REDIS_URL is set,
 * shared by every replica, and in this process whenever Redis fails, so a
 * Redis outage never fails a request (the plugin's own Redis store turns an
 * outage into errors). `skipOnError` stays on as a second guard.
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
export async function installRateLimits(app: FastifyInstance, options: RateLimitOptions): Promise<RateLimits> {
  const { env, logger } = options;
  const local = createMemoryRateCounter();
  let warned = false;
  const prefix = options.redisPrefix ?? 'mcpgw:rl:';
  const shared =
    options.redis !== undefined
      ? createRedisRateCounter({ redis: options.redis, prefix })
      : env.REDIS_URL === undefined
        ? undefined
        : createRedisRateCounter({
            redis: {
              url: env.REDIS_URL,
              logger,
              ...(options.redisCommandTimeoutMs === undefined
                ? {}
                : { commandTimeoutMs: options.redisCommandTimeoutMs }),
            },
            prefix,
          });
  // Like the cache: wait briefly at start on a connection of its own, so the first requests count where the rest will.
  if (options.redis === undefined && shared !== undefined && !(await shared.ready(2000))) {
    logger.warn({}, 'Redis does not answer yet: rate limits count in process until it does');
  }
  const counter: RateCounter =
    shared === undefined
      ? local
      : withFallbackCounter(shared, local, (error) => {
          // Once per outage is enough for the log; the counters keep working.
          if (warned) return;
          warned = true;
          logger.warn({ err: { message: (error as Error).message } }, 'rate limits count in process while Redis fails');
        });
  app.addHook('onClose', async () => counter.close());

  class CounterStore {
    incr(
      key: string,
      callback: (error: Error | null, result?: { current: number; ttl: number }) => void,
      windowMs: number,
    ) {
      counter.increment(key, windowMs).then(
        (count) => {
          warned = false;
          callback(null, { current: count.current, ttl: count.ttlMs });
        },
        (error: Error) => callback(error),
      );
    }
    child() {
      return this;
    }
  }
  await app.register(fastifyRateLimit, { global: false, store: CounterStore, skipOnError: true });

  const subjects = new WeakMap<FastifyRequest, Subject>();
  const check = app.createRateLimit({
    timeWindow: WINDOW_MS,
    keyGenerator: (request) => {
      const subject = subjects.get(request) as Subject;
      return `${subject.scope}:${subject.key}`;
    },
    max: (request) => (subjects.get(request) as Subject).limit,
  });
  const refused: Record<RateLimitScope, number> = { ip: 0, tenant: 0, principal: 0 };

  const run = async (request: FastifyRequest, subject: Subject): Promise<RateLimitRefusal | undefined> => {
    if (subject.limit === 0) return undefined;
    subjects.set(request, subject);
    const outcome = await check(request);
    if (outcome.isAllowed || !outcome.isExceeded) return undefined;
    refused[subject.scope] += 1;
    options.onRefused?.(subject.scope);
    return { scope: subject.scope, retryAfterSeconds: Math.max(1, outcome.ttlInSeconds) };
  };
  const exempt = (request: FastifyRequest): boolean =>
    env.TRUSTED_PROXIES.length === 0 && isLoopbackAddress(request.ip);
  /** A tenant's own limit, else the default unless the peer is exempt. */
  const limitOf = (request: FastifyRequest, own: number | undefined, fallback: number) =>
    own ?? (exempt(request) ? 0 : fallback);

  return {
    checkAddress: (request) =>
      run(request, {
        scope: 'ip',
        key: request.ip,
        limit: exempt(request) ? 0 : env.RATE_LIMIT_IP_PER_MINUTE,
      }),
    checkTenant: (request, tenant) =>
      run(request, {
        scope: 'tenant',
        key: tenant.id,
        limit: limitOf(request, tenant.limits?.requestsPerMinute, env.RATE_LIMIT_TENANT_PER_MINUTE),
      }),
    checkPrincipal: (request, tenant, principalKey) =>
      run(request, {
        scope: 'principal',
        key: `${tenant.id}:${principalKey}`,
        limit: limitOf(request, tenant.limits?.perPrincipalPerMinute, env.RATE_LIMIT_PRINCIPAL_PER_MINUTE),
      }),
    // Keys of their own ("admin:"), so the admin API's counts never eat into the MCP endpoint's.
    checkAdminAddress: (request) =>
      run(request, {
        scope: 'ip',
        key: `admin:${request.ip}`,
        limit: exempt(request) ? 0 : env.RATE_LIMIT_ADMIN_IP_PER_MINUTE,
      }),
    checkAdminPrincipal: (request, principalKey) =>
      run(request, {
        scope: 'principal',
        key: `admin:${principalKey}`,
        limit: exempt(request) ? 0 : env.RATE_LIMIT_ADMIN_PER_MINUTE,
      }),
    refused,
    forgetTenant: (tenantId) => counter.forget([`tenant:${tenantId}`], [`principal:${tenantId}:`]),
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

import type { Logger } from '@mcpgw/core';
import type { RedisConnection } from './redis-connection.js';

/**
 * Per-tenant traffic at one-minute resolution for the last hour: requests,
 * errors, result-cache hits and misses, and latency (a sum and a histogram),
 * for the admin console's charts. With Redis every replica adds to the same
 * hash per tenant-minute, so a read sums the whole deployment; without it the
 * counts are this process's.
 *
 * Counting never touches a request's critical path: `recordRequest` and
 * `recordCacheLookup` add to a pending tally in process, and a timer sends
 * each tally as one pipelined batch of HINCRBYs (a failed batch is logged and
 * dropped: charts may miss a second, a request never fails).
 */
export interface TenantTraffic {
  recordRequest(tenantId: string, request: { readonly error: boolean; readonly latencyMs: number }): void;
  /** A cacheable lookup of the result cache: served from it (`hit`) or not. */
  recordCacheLookup(tenantId: string, hit: boolean): void;
  /** The last `TRAFFIC_MINUTES` minutes of the tenant, oldest first, the current minute last. */
  lastHour(tenantId: string): Promise<TrafficMinute[]>;
  /** Sends what is pending now (tests, and close). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** One minute of one tenant. */
export interface TrafficMinute {
  /** The minute's start, milliseconds since the epoch. */
  readonly at: number;
  readonly requests: number;
  readonly errors: number;
  readonly cacheHits: number;
  readonly cacheMisses: number;
  /** Summed latency of the minute's requests, milliseconds. */
  readonly latencyMsSum: number;
  /** Requests per latency bucket: `latencyBuckets[i]` counted those at most `LATENCY_BUCKETS_MS[i]` (the last: any). */
  readonly latencyBuckets: readonly number[];
}

export const TRAFFIC_MINUTES = 60;
const MINUTE_MS = 60_000;
/** A bit over the hour shown, so the oldest minute is still there when read. */
export const TRAFFIC_TTL_SECONDS = 65 * 60;
/** Upper bounds of the latency buckets in milliseconds; a last bucket takes anything slower. */
export const LATENCY_BUCKETS_MS = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000] as const;

const FIELDS = { requests: 'r', errors: 'e', cacheHits: 'h', cacheMisses: 'm', latencyMsSum: 'l' } as const;
const bucketField = (index: number) => `b${index}`;

export interface TenantTrafficOptions {
  /** The process's Redis connection; absent: counts in this process only. */
  readonly redis?: RedisConnection | undefined;
  /** Key prefix, e.g. `mcpgw:traffic:`; tests use their own namespace. */
  readonly prefix?: string;
  /**
   * The tenant as its Redis keys name it: the cache's keyed tenant tag
   * (CacheKeys.tenantTag), so no key names a tenant in the clear, as no
   * cache key does. Default: the tenant id (tests).
   */
  readonly tenantTag?: (tenantId: string) => string;
  readonly now?: () => number;
  /** How long tallies wait before they are sent. Default 1,000 ms. */
  readonly flushMs?: number;
  readonly logger?: Logger;
}

type Tally = Map<string, number>;

/** The bucket a latency falls in. */
function bucketOf(latencyMs: number): number {
  const index = LATENCY_BUCKETS_MS.findIndex((bound) => latencyMs <= bound);
  return index === -1 ? LATENCY_BUCKETS_MS.length : index;
}

function minuteOf(tally: Readonly<Record<string, string | number>> | undefined, at: number): TrafficMinute {
  const read = (field: string) => Number(tally?.[field] ?? 0) || 0;
  return {
    at,
    requests: read(FIELDS.requests),
    errors: read(FIELDS.errors),
    cacheHits: read(FIELDS.cacheHits),
    cacheMisses: read(FIELDS.cacheMisses),
    latencyMsSum: read(FIELDS.latencyMsSum),
    latencyBuckets: Array.from({ length: LATENCY_BUCKETS_MS.length + 1 }, (_, index) => read(bucketField(index))),
  };
}

export function createTenantTraffic(options: TenantTrafficOptions = {}): TenantTraffic {
  const now = options.now ?? Date.now;
  const prefix = options.prefix ?? 'mcpgw:traffic:';
  const flushMs = options.flushMs ?? 1000;
  const redis = options.redis;
  // Redis: what is not sent yet, per tenant-minute. In process: the kept minutes themselves.
  const pending = new Map<string, { tenantId: string; at: number; tally: Tally }>();
  let timer: NodeJS.Timeout | undefined;
  let sending: Promise<void> = Promise.resolve();

  // The tenant in braces is a Redis Cluster hash tag: a tenant's hour lives in one slot, read in one pipeline.
  const tenantTag = options.tenantTag ?? ((tenantId: string) => tenantId);
  const keyOf = (tenantId: string, at: number) => `${prefix}{${tenantTag(tenantId)}}:${at}`;

  const add = (tenantId: string, counts: ReadonlyArray<readonly [string, number]>) => {
    const at = Math.floor(now() / MINUTE_MS) * MINUTE_MS;
    const key = keyOf(tenantId, at);
    let entry = pending.get(key);
    if (entry === undefined) {
      entry = { tenantId, at, tally: new Map() };
      pending.set(key, entry);
    }
    for (const [field, count] of counts) entry.tally.set(field, (entry.tally.get(field) ?? 0) + count);
    if (redis === undefined) {
      forgetOldMinutes(at);
      return;
    }
    if (timer === undefined) {
      timer = setTimeout(() => void flush(), flushMs);
      timer.unref();
    }
  };

  // In process only: minutes older than the hour shown are dropped as new ones start.
  let oldestKept = 0;
  const forgetOldMinutes = (at: number) => {
    const cutoff = at - TRAFFIC_MINUTES * MINUTE_MS;
    if (cutoff <= oldestKept) return;
    oldestKept = cutoff;
    for (const [key, entry] of pending) if (entry.at <= cutoff) pending.delete(key);
  };

  const send = async (batch: Array<[string, Tally]>) => {
    if (redis === undefined || batch.length === 0) return;
    const pipeline = redis.client.pipeline();
    for (const [key, tally] of batch) {
      for (const [field, count] of tally) pipeline.hincrby(key, field, count);
      pipeline.expire(key, TRAFFIC_TTL_SECONDS);
    }
    try {
      const results = (await pipeline.exec()) ?? [];
      const failed = results.find(([error]) => error !== null);
      if (failed !== undefined) throw failed[0];
    } catch (error) {
      options.logger?.warn({ err: String(error) }, 'traffic counters were not sent to Redis; the charts miss them');
    }
  };

  const flush = async () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (redis === undefined) return;
    const batch = [...pending].map(([key, entry]) => [key, entry.tally] as [string, Tally]);
    pending.clear();
    sending = sending.then(() => send(batch));
    await sending;
  };

  return {
    recordRequest(tenantId, request) {
      const latencyMs = Math.max(0, Math.round(request.latencyMs));
      add(tenantId, [
        [FIELDS.requests, 1],
        [FIELDS.errors, request.error ? 1 : 0],
        [FIELDS.latencyMsSum, latencyMs],
        [bucketField(bucketOf(latencyMs)), 1],
      ]);
    },
    recordCacheLookup(tenantId, hit) {
      add(tenantId, [[hit ? FIELDS.cacheHits : FIELDS.cacheMisses, 1]]);
    },
    async lastHour(tenantId) {
      const current = Math.floor(now() / MINUTE_MS) * MINUTE_MS;
      const minutes = Array.from(
        { length: TRAFFIC_MINUTES },
        (_, index) => current - (TRAFFIC_MINUTES - 1 - index) * MINUTE_MS,
      );
      if (redis === undefined) {
        return minutes.map((at) => {
          const tally = pending.get(keyOf(tenantId, at))?.tally;
          return minuteOf(tally === undefined ? undefined : Object.fromEntries(tally), at);
        });
      }
      await flush();
      const pipeline = redis.client.pipeline();
      for (const at of minutes) pipeline.hgetall(keyOf(tenantId, at));
      const results = (await pipeline.exec()) ?? [];
      return minutes.map((at, index) => {
        const [error, tally] = results[index] ?? [null, undefined];
        if (error !== null) throw error;
        return minuteOf(tally as Record<string, string> | undefined, at);
      });
    },
    flush,
    async close() {
      await flush();
    },
  };
}

/** The latency under which `quantile` of the minute's requests finished: a bucket's upper bound, undefined with no request or above the last bound. */
export function latencyQuantileMs(minute: TrafficMinute, quantile: number): number | undefined {
  if (minute.requests === 0) return undefined;
  const rank = quantile * minute.requests;
  let seen = 0;
  for (const [index, count] of minute.latencyBuckets.entries()) {
    seen += count;
    if (seen >= rank) return LATENCY_BUCKETS_MS[index];
  }
  return undefined;
}

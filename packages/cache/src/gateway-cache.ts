import { randomBytes } from 'node:crypto';
import type { Logger, ReplicaBus } from '@mcpgw/core';
import { createInProcessReplicaBus, errorSummary, silentLogger } from '@mcpgw/core';
import type { CacheKeys, EntryKeyParts } from './cache-keys.js';
import { createCacheKeys } from './cache-keys.js';
import type { CacheEvent, TenantCacheMetrics } from './cache-metrics.js';
import { CacheMetrics } from './cache-metrics.js';
import type { CacheStore } from './cache-store.js';
import type { BreakerStore, CircuitBreakerOptions } from './circuit-breaker.js';
import { CacheBypassError, withCircuitBreaker } from './circuit-breaker.js';
import type { MemoryStoreOptions } from './memory-store.js';
import { createMemoryStore } from './memory-store.js';
import type { RedisConnection } from './redis-connection.js';
import { openRedisConnection } from './redis-connection.js';
import { createRedisReplicaBus } from './redis-replica-bus.js';
import { createRedisStore } from './redis-store.js';
import type { ResultCall, ResultLookup } from './shared-results.js';
import { createSharedResults } from './shared-results.js';
import { SingleFlight } from './single-flight.js';
import { TenantGenerations } from './tenant-generations.js';

export interface GatewayCacheOptions {
  /** The process's Redis connection (the caller closes it); takes the place of `redisUrl`. */
  redis?: RedisConnection | undefined;
  /** REDIS_URL, for a cache on a connection of its own; neither this nor `redis`: the in-process store. */
  redisUrl?: string | undefined;
  /**
   * The replica bus invalidations travel on (the app's, which its owner
   * closes). Absent: the bus over the cache's Redis connection, or in
   * process without Redis (one replica).
   */
  bus?: ReplicaBus | undefined;
  /** The key naming cache entries: `ServerKeys.cacheKey` from `@mcpgw/core`. */
  key: Uint8Array;
  logger?: Logger;
  /** Prefix of every Redis key and channel. Default `mcpgw`. */
  namespace?: string;
  /** Bounds of the in-process store. */
  memory?: Omit<MemoryStoreOptions, 'now'>;
  /** Redis per-command deadline of a connection of its own (`redisUrl`). Default 50 ms. */
  commandTimeoutMs?: number;
  breaker?: Omit<CircuitBreakerOptions, 'logger'>;
  /** How long a replica waits for another replica's in-flight backend call before making its own. Default 500 ms. */
  lockWaitMs?: number;
  /** Values larger than this (characters of JSON) are served but not stored. Default 1 MiB. */
  maxValueBytes?: number;
  /** Clock; tests pass a fake one (it also drives the in-process store's expiry). */
  now?: () => number;
}

/** How one `getOrFetch` call goes. */
export interface CachedCall<T> {
  tenantId: string;
  /** The configuration revision of the runtime asking (see EntryKeyParts.revision). Default 0. */
  revision?: number;
  key: Omit<EntryKeyParts, 'tenantId' | 'generation' | 'revision'>;
  /** False for requests that must never be cached (MRTR retries). */
  cacheable: boolean;
  /** How long the fetched value may be kept; 0 or less: not stored. */
  ttlMs(value: T): number;
  /** Collapse concurrent misses across replicas with a short Redis lock (the shared catalog layer). */
  crossReplica: boolean;
  signal: AbortSignal | undefined;
  fetch(signal: AbortSignal | undefined): Promise<T>;
}

/** A value as stored: when it was stored, so a hit can report the freshness left. */
export interface Stored<T> {
  value: T;
  /** The `ttlMs` left: milliseconds of freshness since it was stored. */
  ttlMs: number;
}

/** The cache the gateway holds for its lifetime: both layers share one store. */
export interface GatewayCache {
  readonly kind: 'memory' | 'redis';
  /**
   * The stored value of the call (with the `ttlMs` it has left), or else
   * fetches, stores and returns it (`ttlMs` undefined: the caller knows the
   * fresh value's own). Never fails because of the cache: store errors and
   * an open circuit mean "fetch".
   */
  getOrFetch<T>(call: CachedCall<T>): Promise<Stored<T> | { value: T; ttlMs: undefined }>;
  /**
   * The per-credential result cache, with identical bodies stored once
   * (see {@link createSharedResults}); like `getOrFetch`, fetches and stores
   * on a miss. Never fails because of the cache.
   */
  getOrFetchResult(call: ResultCall): Promise<ResultLookup>;
  /** Makes all of a tenant's entries unreachable on every replica (source change, admin write). */
  invalidateTenant(tenantId: string): Promise<void>;
  /**
   * This replica starts applying `revision` of the tenant: lookups made under
   * an older revision bypass the cache from now on, here and, through the
   * store's revision floor, on every replica.
   */
  noteRevision(tenantId: string, revision: number): Promise<void>;
  /**
   * The tenant was deleted: refuses its runtimes still finishing requests,
   * deletes every key of it from the store, and forgets what this process
   * holds of it. `revision`: the newest revision of it this replica had
   * seen, if known (its runtimes of that revision or older are refused).
   * Resolves to the number of store keys deleted.
   */
  dropTenant(tenantId: string, revision?: number): Promise<number>;
  /** Told when the store shows a revision of a tenant newer than one a lookup was made under. */
  onNewerRevision(listener: (tenantId: string, revision: number) => void): () => void;
  /**
   * Resolves true once the store is connected, false after `timeoutMs`
   * (the gateway then starts anyway and serves uncached until Redis answers).
   */
  ready(timeoutMs: number): Promise<boolean>;
  /** Counters per tenant id. */
  metrics(): Record<string, TenantCacheMetrics>;
  /** True while the Redis circuit breaker is open (requests are served uncached); always false in-process. */
  circuitOpen(): boolean;
  close(): Promise<void>;
}

/** Creates the gateway cache: Redis when `redis` or `redisUrl` is given, otherwise the in-process LRU. */
export function createGatewayCache(options: GatewayCacheOptions): GatewayCache {
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;
  // A connection of its own (`redisUrl`) is closed with the cache; the process's (`redis`) by its owner.
  const own =
    options.redis === undefined && options.redisUrl !== undefined
      ? openRedisConnection({
          url: options.redisUrl,
          logger,
          ...(options.commandTimeoutMs === undefined ? {} : { commandTimeoutMs: options.commandTimeoutMs }),
        })
      : undefined;
  const redis = options.redis ?? own;
  const store: CacheStore =
    redis === undefined
      ? createMemoryStore({ ...options.memory, now })
      : withCircuitBreaker(createRedisStore(redis), { ...options.breaker, logger });
  const keys = createCacheKeys({
    key: options.key,
    ...(options.namespace ? { namespace: options.namespace } : {}),
  });
  const bus = options.bus ?? (redis === undefined ? createInProcessReplicaBus() : createRedisReplicaBus(redis));
  const cache = createGatewayCacheOn(store, keys, bus, { ...options, logger, now });
  if (options.bus !== undefined && own === undefined) return cache;
  return {
    ...cache,
    async close() {
      await cache.close();
      if (options.bus === undefined) await bus.close();
      await own?.close();
    },
  };
}

/** The engine over any store and bus (exported for tests that bring their own); closes the store, not the bus. */
export function createGatewayCacheOn(
  store: CacheStore,
  keys: CacheKeys,
  bus: ReplicaBus,
  options: Pick<GatewayCacheOptions, 'lockWaitMs' | 'maxValueBytes' | 'now' | 'logger'> = {},
): GatewayCache {
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;
  const lockWaitMs = options.lockWaitMs ?? 500;
  const maxValueBytes = options.maxValueBytes ?? 1024 * 1024;
  const metrics = new CacheMetrics();
  const flights = new SingleFlight();
  const generations = new TenantGenerations(store, keys, bus);
  const failed = (tenantId: string, layer: EntryKeyParts['layer'], error: unknown) => {
    const event: CacheEvent = error instanceof CacheBypassError ? 'bypasses' : 'errors';
    metrics.count(tenantId, layer, event);
    if (event === 'errors') logger.debug({ err: errorSummary(error) }, 'cache command failed');
  };

  const decode = <T>(raw: string): Stored<T> | undefined => {
    try {
      const parsed = JSON.parse(raw) as { at: number; ttl: number; value: T };
      return { value: parsed.value, ttlMs: Math.max(0, parsed.at + parsed.ttl - now()) };
    } catch {
      return undefined;
    }
  };

  const store_ = async <T>(tenantId: string, layer: EntryKeyParts['layer'], key: string, value: T, ttlMs: number) => {
    const ttl = Math.floor(ttlMs);
    if (!(ttl > 0)) return;
    const raw = JSON.stringify({ at: now(), ttl, value });
    if (raw.length > maxValueBytes) return;
    await store.set(key, raw, ttl).catch((error: unknown) => failed(tenantId, layer, error));
  };

  /** Waits briefly for another replica that holds the lock to store the value. */
  const awaitOtherReplica = async <T>(key: string, lock: string): Promise<Stored<T> | undefined> => {
    // Real time, not the injectable clock: this bounds how long a request waits.
    const started = Date.now();
    while (Date.now() - started < lockWaitMs) {
      await new Promise((resolve) => setTimeout(resolve, 15));
      const [raw, holder] = await store.getMany([key, lock]);
      if (raw !== undefined) return decode<T>(raw);
      // The holder finished without storing (its fetch failed, or ttl 0): stop waiting.
      if (holder === undefined) return undefined;
    }
    return undefined;
  };

  const getOrFetchResult = createSharedResults({
    store,
    keys,
    flights,
    generation: (tenantId, revision) => generations.current(tenantId, revision),
    count: (tenantId, event) => metrics.count(tenantId, 'result', event),
    failed: (tenantId, error) => failed(tenantId, 'result', error),
    now,
    maxValueBytes,
  });

  return {
    kind: store.kind,
    getOrFetchResult,

    async getOrFetch<T>(call: CachedCall<T>) {
      const { tenantId } = call;
      const { layer } = call.key;
      const uncached = async () => ({ value: await call.fetch(call.signal), ttlMs: undefined });
      if (!call.cacheable) {
        metrics.count(tenantId, layer, 'bypasses');
        return uncached();
      }
      let key: string;
      let raw: string | undefined;
      try {
        const revision = call.revision ?? 0;
        const generation = await generations.current(tenantId, revision);
        key = keys.entry({ ...call.key, tenantId, generation, revision });
        raw = await store.get(key);
      } catch (error) {
        failed(tenantId, layer, error);
        return uncached();
      }
      const hit = raw === undefined ? undefined : decode<T>(raw);
      if (hit !== undefined) {
        metrics.count(tenantId, layer, 'hits');
        return hit;
      }
      metrics.count(tenantId, layer, 'misses');
      const entryKey = key;
      const value = await flights.run(entryKey, call.signal, async (signal) => {
        let lock: string | undefined;
        if (call.crossReplica && store.kind === 'redis') {
          lock = keys.lock(entryKey);
          const token = randomBytes(8).toString('base64url');
          // A lock outlives a normal backend call but not a stuck one.
          const mine = await store.setIfAbsent(lock, token, 2 * lockWaitMs + 1000).catch(() => true);
          if (!mine) {
            const theirs = await awaitOtherReplica<T>(entryKey, lock).catch(() => undefined);
            if (theirs !== undefined) return theirs.value;
            lock = undefined;
          }
        }
        try {
          const fetched = await call.fetch(signal);
          await store_(tenantId, layer, entryKey, fetched, call.ttlMs(fetched));
          return fetched;
        } finally {
          if (lock !== undefined) await store.delete(lock).catch(() => undefined);
        }
      });
      return { value, ttlMs: undefined };
    },

    ready: (timeoutMs) => store.ready(timeoutMs),
    invalidateTenant: (tenantId) => generations.invalidate(tenantId),
    noteRevision: (tenantId, revision) => generations.noteRevision(tenantId, revision),
    async dropTenant(tenantId, revision) {
      getOrFetchResult.forget(keys.tenantPrefix(tenantId));
      return generations.drop(tenantId, revision);
    },
    onNewerRevision: (listener) => generations.onNewer(listener),
    metrics: () => metrics.snapshot(),
    circuitOpen: () => 'state' in store && (store as BreakerStore).state === 'open',
    async close() {
      generations.close();
      await store.close();
    },
  };
}

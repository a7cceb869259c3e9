// The public surface of @mcpgw/cache: what apps/gateway and bench use. Tests
// reach the other modules by path (../src/<module>.js).

/** Builds every cache key, tenant first (bench reads keys through it). */
export { createCacheKeys } from './cache-keys.js';
/** The gateway's cache: the configured store behind a circuit breaker, with per-tenant metrics. */
export { createGatewayCache, type GatewayCache } from './gateway-cache.js';
/** Caches a caller's list and read results, keyed by the principal's fingerprint. */
export { withResultCache } from './caching-resource-service.js';
/** Caches a source's own listings and reads, shared by every caller of the tenant. */
export { createCachingSource } from './caching-source.js';
/** Hits, misses, errors and bypasses per tenant and layer, as `GatewayCache.metrics()` reports them. */
export type { TenantCacheMetrics } from './cache-metrics.js';
/** Fixed-window request counters for rate limits: in process, in Redis, and Redis with an in-process fallback. */
export { createMemoryRateCounter, createRedisRateCounter, withFallbackCounter } from './rate-counter.js';
export { batchRateCounter, type BatchedRateCounterOptions } from './batched-rate-counter.js';
export type { RateCounter, WindowCount } from './rate-counter.js';
/** The process's Redis (one node or a cluster, as REDIS_URL says): one command client and one subscriber, with its heartbeat. */
export { openRedisConnection } from './redis-connection.js';
export type { RedisConnection, RedisConnectionOptions, ResyncListener } from './redis-connection.js';
/** The replica bus over Redis pub/sub, on that connection's subscriber (docs/adr/0012-one-bus-two-transports.md). */
export { createRedisReplicaBus, type RedisReplicaBus } from './redis-replica-bus.js';
export type { RedisRateCounter } from './rate-counter.js';
/** Per-tenant requests, errors, cache lookups and latency per minute over the last hour (Redis or in process). */
export { createTenantTraffic, latencyQuantileMs, LATENCY_BUCKETS_MS, TRAFFIC_MINUTES } from './tenant-traffic.js';
export type { TenantTraffic, TenantTrafficOptions, TrafficMinute } from './tenant-traffic.js';
export { countResultLookups } from './counted-result-lookups.js';
/** Which callers read or listed which resources of a tenant lately (Redis or in process, bounded). */
export { createAccessActivity } from './access-activity.js';
export type { AccessActivity, AccessActivityOptions, AccessEntry, AccessRecord } from './access-activity.js';

/** Counters of one cache layer. */
export interface CacheCounters {
  /** Served from the cache. */
  hits: number;
  /** Looked up, absent, fetched from the backend. */
  misses: number;
  /** A store command failed (timeout, connection); the request was served uncached. */
  errors: number;
  /** The cache was not consulted: circuit open, a request that must not be cached, or a `ttlMs` of 0. */
  bypasses: number;
}

/** One tenant's counters per layer: `result` (each caller's finished results) and `source` (backend pages). */
export interface TenantCacheMetrics {
  result: CacheCounters;
  source: CacheCounters;
}

export type CacheEvent = keyof CacheCounters;
export type CacheLayer = keyof TenantCacheMetrics;

const zero = (): CacheCounters => ({ hits: 0, misses: 0, errors: 0, bypasses: 0 });

/** In-process counters the app can expose; a snapshot is a plain object per tenant id. */
export class CacheMetrics {
  private readonly tenants = new Map<string, TenantCacheMetrics>();

  count(tenantId: string, layer: CacheLayer, event: CacheEvent): void {
    let counters = this.tenants.get(tenantId);
    if (counters === undefined) {
      counters = { result: zero(), source: zero() };
      this.tenants.set(tenantId, counters);
    }
    counters[layer][event] += 1;
  }

  snapshot(): Record<string, TenantCacheMetrics> {
    return Object.fromEntries(
      [...this.tenants].map(([tenantId, { result, source }]) => [
        tenantId,
        { result: { ...result }, source: { ...source } },
      ]),
    );
  }
}

/** Per-tenant cache counters (issue 4, Metrics). */
export interface CacheCounters {
  /** Served from the cache. */
  hits: number;
  /** Looked up, absent, fetched from the backend. */
  misses: number;
  /** A store command failed (timeout, connection); the request was served uncached. */
  errors: number;
  /** The cache was not consulted: circuit open, or a request that must not be cached. */
  bypasses: number;
}

export type CacheEvent = keyof CacheCounters;

/** In-process counters the app can expose; a snapshot is a plain object per tenant id. */
export class CacheMetrics {
  private readonly tenants = new Map<string, CacheCounters>();

  count(tenantId: string, event: CacheEvent): void {
    let counters = this.tenants.get(tenantId);
    if (counters === undefined) {
      counters = { hits: 0, misses: 0, errors: 0, bypasses: 0 };
      this.tenants.set(tenantId, counters);
    }
    counters[event] += 1;
  }

  snapshot(): Record<string, CacheCounters> {
    return Object.fromEntries([...this.tenants].map(([tenantId, counters]) => [tenantId, { ...counters }]));
  }
}

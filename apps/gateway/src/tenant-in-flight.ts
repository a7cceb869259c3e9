/**
 * The bulkhead between tenants: a cap on each tenant's MCP requests in flight
 * on this replica. A tenant whose backend hangs (a slow bucket, a database at
 * its statement timeout) holds at most its cap of sockets, memory and
 * backend connections; its further requests are refused at once with 503 and
 * Retry-After instead of queueing, and other tenants' requests never wait on
 * its slots. Finer caps live in the sources (the S3 per-tenant slots).
 */
export interface TenantInFlight {
  /**
   * Takes one of `tenantId`'s `cap` slots, or returns undefined when all are
   * taken. 0 means no cap. The returned release is idempotent.
   */
  enter(tenantId: string, cap: number): (() => void) | undefined;
  /** Requests of `tenantId` in flight now. */
  count(tenantId: string): number;
  /** Requests refused so far because their tenant was at its cap. */
  readonly refused: number;
}

/** `onRefused` is called for each refusal (metrics). */
export function createTenantInFlight(onRefused: () => void = () => undefined): TenantInFlight {
  const counts = new Map<string, number>();
  let refused = 0;
  return {
    enter(tenantId, cap) {
      const current = counts.get(tenantId) ?? 0;
      if (cap > 0 && current >= cap) {
        refused += 1;
        onRefused();
        return undefined;
      }
      counts.set(tenantId, current + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (counts.get(tenantId) ?? 1) - 1;
        if (left === 0) counts.delete(tenantId);
        else counts.set(tenantId, left);
      };
    },
    count: (tenantId) => counts.get(tenantId) ?? 0,
    get refused() {
      return refused;
    },
  };
}

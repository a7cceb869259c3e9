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
  // One counter per tenant, kept at zero rather than deleted: a Map entry added and removed with every
  // request would rebuild the Map's table again and again (see RecencyMap in @mcpgw/core). Only tenants
  // the registry serves get here, so the Map is bounded by the tenants this process has served.
  const counts = new Map<string, { inFlight: number }>();
  const counterOf = (tenantId: string) => {
    let counter = counts.get(tenantId);
    if (counter === undefined) counts.set(tenantId, (counter = { inFlight: 0 }));
    return counter;
  };
  let refused = 0;
  return {
    enter(tenantId, cap) {
      const counter = counterOf(tenantId);
      if (cap > 0 && counter.inFlight >= cap) {
        refused += 1;
        onRefused();
        return undefined;
      }
      counter.inFlight += 1;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        counter.inFlight -= 1;
      };
    },
    count: (tenantId) => counts.get(tenantId)?.inFlight ?? 0,
    get refused() {
      return refused;
    },
  };
}

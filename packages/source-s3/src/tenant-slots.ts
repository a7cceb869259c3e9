/**
 * A per-tenant cap on in-flight S3 requests, shared by every S3 source of the
 * tenant in this process, so that one slow bucket cannot starve other
 * tenants. A tenant whose bucket hangs holds at most its cap of sockets and
 * memory; its further requests queue (FIFO) and fail at their deadline, while
 * other tenants' requests never wait on it.
 *
 * Each source brings its own `maxInFlightPerTenant`: a request starts only
 * while the tenant has fewer requests in flight than that limit.
 */

interface Waiter {
  limit: number;
  grant: () => void;
}

interface TenantState {
  inFlight: number;
  waiters: Waiter[];
}

const tenants = new Map<string, TenantState>();

/** Releases a slot; idempotent. */
export type ReleaseSlot = () => void;

/**
 * Waits for a slot of `tenantId`. Rejects with `signal.reason` when the signal
 * aborts first (the caller's deadline), leaving the queue untouched.
 */
export function acquireTenantSlot(tenantId: string, limit: number, signal: AbortSignal): Promise<ReleaseSlot> {
  signal.throwIfAborted();
  let state = tenants.get(tenantId);
  if (state === undefined) {
    state = { inFlight: 0, waiters: [] };
    tenants.set(tenantId, state);
  }
  const tenant = state;
  const release = onceRelease(tenantId, tenant);
  if (tenant.waiters.length === 0 && tenant.inFlight < limit) {
    tenant.inFlight += 1;
    return Promise.resolve(release);
  }
  return new Promise<ReleaseSlot>((resolve, reject) => {
    const waiter: Waiter = {
      limit,
      grant: () => {
        signal.removeEventListener('abort', onAbort);
        resolve(release);
      },
    };
    const onAbort = (): void => {
      const index = tenant.waiters.indexOf(waiter);
      if (index !== -1) tenant.waiters.splice(index, 1);
      reject(signal.reason);
      // The head may have been blocked behind this waiter's limit only.
      drain(tenantId, tenant);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    tenant.waiters.push(waiter);
  });
}

/** In-flight requests of a tenant (for tests and metrics). */
export function tenantInFlight(tenantId: string): number {
  return tenants.get(tenantId)?.inFlight ?? 0;
}

function onceRelease(tenantId: string, tenant: TenantState): ReleaseSlot {
  let released = false;
  return () => {
    if (released) return;
    released = true;
    tenant.inFlight -= 1;
    drain(tenantId, tenant);
  };
}

function drain(tenantId: string, tenant: TenantState): void {
  for (let head = tenant.waiters[0]; head !== undefined && tenant.inFlight < head.limit; head = tenant.waiters[0]) {
    tenant.waiters.shift();
    tenant.inFlight += 1;
    head.grant();
  }
  // Forget idle tenants so the map does not grow with every tenant ever seen.
  if (tenant.inFlight === 0 && tenant.waiters.length === 0 && tenants.get(tenantId) === tenant) {
    tenants.delete(tenantId);
  }
}

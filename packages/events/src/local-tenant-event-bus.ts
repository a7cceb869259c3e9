import type { Logger } from '@mcpgw/core';
import { errorSummary } from '@mcpgw/core';
import { createLocalLeases } from './leases.js';
import type { TenantEvent, TenantEventBus, TenantEventListener } from './tenant-events.js';

/**
 * The bus of a single replica (no Redis configured): events reach this
 * process's listeners only, synchronously, in publication order.
 */
export function createLocalTenantEventBus(logger: Logger): TenantEventBus {
  const listeners = new Map<string, Set<TenantEventListener>>();
  let closed = false;
  return {
    leases: createLocalLeases(),
    publish(event: TenantEvent): void {
      if (closed) return;
      for (const listener of [...(listeners.get(event.tenantId) ?? [])]) {
        try {
          listener(event);
        } catch (error) {
          logger.warn({ tenant: event.tenantId, err: errorSummary(error) }, 'a tenant event listener threw');
        }
      }
    },
    subscribe(tenantId: string, listener: TenantEventListener): () => void {
      if (closed) return () => {};
      // A wrapper per subscription, so the same function subscribed twice is two subscriptions.
      const entry: TenantEventListener = (event) => listener(event);
      let set = listeners.get(tenantId);
      if (set === undefined) listeners.set(tenantId, (set = new Set()));
      set.add(entry);
      return () => {
        set.delete(entry);
        if (set.size === 0 && listeners.get(tenantId) === set) listeners.delete(tenantId);
      };
    },
    close(): Promise<void> {
      closed = true;
      listeners.clear();
      return Promise.resolve();
    },
  };
}

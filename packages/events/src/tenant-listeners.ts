import type { Logger } from '@mcpgw/core';
import { errorSummary } from '@mcpgw/core';
import type { TenantEvent, TenantEventListener } from './tenant-events.js';

/** Called when a tenant gets its first listener on this replica, and when its last one leaves. */
export interface TenantListenerHooks {
  first(tenantId: string): void;
  last(tenantId: string): void;
}

/**
 * This replica's listeners per tenant, bounded per tenant: a subscription
 * over the bound throws (stream limits are meant to refuse long before).
 * Delivery is synchronous and in order; a throwing listener is logged and the
 * others still get the event.
 */
export class TenantListeners {
  readonly #sets = new Map<string, Set<TenantEventListener>>();
  readonly #logger: Logger;
  readonly #max: number;
  readonly #hooks: TenantListenerHooks;

  constructor(logger: Logger, maxPerTenant: number, hooks: TenantListenerHooks) {
    this.#logger = logger;
    this.#max = maxPerTenant;
    this.#hooks = hooks;
  }

  /** Adds a listener; returns its removal (safe to call twice). */
  add(tenantId: string, listener: TenantEventListener): () => void {
    let set = this.#sets.get(tenantId);
    if (set !== undefined && set.size >= this.#max) {
      throw new Error(`Tenant '${tenantId}' already has ${this.#max} event listeners on this replica`);
    }
    // A wrapper per subscription, so the same function subscribed twice is two subscriptions.
    const entry: TenantEventListener = (event) => listener(event);
    const first = set === undefined;
    if (set === undefined) this.#sets.set(tenantId, (set = new Set()));
    set.add(entry);
    if (first) this.#hooks.first(tenantId);
    const owned = set;
    return () => {
      if (!owned.delete(entry) || owned.size > 0 || this.#sets.get(tenantId) !== owned) return;
      this.#sets.delete(tenantId);
      this.#hooks.last(tenantId);
    };
  }

  has(tenantId: string): boolean {
    return this.#sets.has(tenantId);
  }

  /** The tenants with at least one listener. */
  tenants(): string[] {
    return [...this.#sets.keys()];
  }

  deliver(event: TenantEvent): void {
    for (const listener of [...(this.#sets.get(event.tenantId) ?? [])]) {
      try {
        listener(event);
      } catch (error) {
        this.#logger.warn({ tenant: event.tenantId, err: errorSummary(error) }, 'a tenant event listener threw');
      }
    }
  }

  /** Forgets every listener without calling the hooks (shutdown). */
  clear(): void {
    this.#sets.clear();
  }
}

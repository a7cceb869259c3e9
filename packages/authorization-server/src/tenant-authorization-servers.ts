import type { Logger } from '@mcpgw/core';
import type { TenantAuthorizationServer } from './authorization-server-options.js';

/** A created server and what to release with it (its adapter's pending writes, say). */
export interface CreatedAuthorizationServer {
  readonly server: TenantAuthorizationServer;
  dispose?(): Promise<void>;
}

export interface TenantAuthorizationServersOptions<R extends object> {
  /** The tenant's serving runtime (TenantRegistry.serving): a server lives as long as the runtime it was made from. */
  runtimeOf(tenantId: string): R | undefined;
  /** Whether a runtime's tenant has a hosted authorization server. */
  hasAuthorizationServer(runtime: R): boolean;
  /** Creates the server of one runtime's configuration (signing keys, adapter and modules wired in). */
  create(tenantId: string, runtime: R): Promise<CreatedAuthorizationServer>;
  readonly logger: Logger;
}

/** Every tenant's hosted authorization server on this replica, each following its tenant's runtime. */
export interface TenantAuthorizationServers {
  /**
   * The server of the tenant's serving runtime: created on first use, made
   * again once the runtime was replaced (a new revision or new keys);
   * undefined when the tenant is not served or has no hosted server.
   */
  serverFor(tenantId: string): Promise<TenantAuthorizationServer | undefined>;
  /** Drops the tenant's server now (its runtime was swapped or removed: TenantRegistry.onServingChange). */
  forget(tenantId: string): void;
  close(): Promise<void>;
}

interface Entry<R> {
  readonly runtime: R;
  readonly created: Promise<CreatedAuthorizationServer>;
}

/**
 * The per-tenant registry of oidc-provider instances (docs/adr/0011). A
 * Provider is built lazily from the runtime that serves the tenant, so a
 * tenant created through the admin API works as soon as its runtime does,
 * and it is keyed by that runtime: when the tenant registry swaps in a new
 * runtime the next request builds a new Provider, and one whose tenant is
 * gone is dropped. Any replica can build any tenant's: their state is in the
 * shared adapter, their cookie keys come from the shared secret.
 */
export function createTenantAuthorizationServers<R extends object>(
  options: TenantAuthorizationServersOptions<R>,
): TenantAuthorizationServers {
  const entries = new Map<string, Entry<R>>();

  const dispose = (entry: Entry<R>): void => {
    void entry.created
      .then((created) => created.dispose?.())
      .catch((error: unknown) =>
        options.logger.warn({ err: error }, 'authorization server: releasing a replaced server failed'),
      );
  };
  const forget = (tenantId: string): void => {
    const entry = entries.get(tenantId);
    if (entry === undefined) return;
    entries.delete(tenantId);
    dispose(entry);
  };

  return {
    async serverFor(tenantId) {
      const runtime = options.runtimeOf(tenantId);
      const cached = entries.get(tenantId);
      if (cached !== undefined && cached.runtime !== runtime) forget(tenantId);
      if (runtime === undefined || !options.hasAuthorizationServer(runtime)) return undefined;
      const current = entries.get(tenantId);
      if (current !== undefined) return (await current.created).server;
      const entry: Entry<R> = { runtime, created: options.create(tenantId, runtime) };
      entries.set(tenantId, entry);
      try {
        return (await entry.created).server;
      } catch (error) {
        // Not remembered: the next request tries again.
        if (entries.get(tenantId) === entry) entries.delete(tenantId);
        throw error;
      }
    },
    forget,
    async close() {
      const all = [...entries.values()];
      entries.clear();
      await Promise.allSettled(all.map((entry) => entry.created.then((created) => created.dispose?.())));
    },
  };
}

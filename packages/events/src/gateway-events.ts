import type { GatewayCache, RedisConnection } from '@mcpgw/cache';
import type { Leases, Logger, ReplicaBus } from '@mcpgw/core';
import type { ListenedTenant } from './listened-tenant.js';
import { openTenantEventBus } from './open-tenant-events.js';
import type { TenantEvents } from './tenant-event-producers.js';
import { createTenantEventProducers } from './tenant-event-producers.js';
import type { TenantEventBus } from './tenant-events.js';

export type { TenantEvents } from './tenant-event-producers.js';

/**
 * BuildAppOptions.events. `bus`: one the caller owns and closes (tests pass
 * their own, one per replica). Otherwise the app's tenant events ride its
 * replica bus (topics `<namespace>:events:<tenant>`, `namespace` default
 * `mcpgw`), and close with it.
 */
export interface EventsOption {
  readonly bus?: TenantEventBus;
  readonly namespace?: string;
}

export interface GatewayEventsOptions {
  /** The app's replica bus (Redis, Postgres or in process), which its owner closes. */
  readonly replicaBus: ReplicaBus;
  /** The process's Redis connection, for the change-detection leases; unset: `leases`, else in-process ones. */
  readonly redis: RedisConnection | undefined;
  /** Without Redis, the leases of the replica bus's transport (advisory locks on a Postgres bus); their owner closes them. */
  readonly leases?: Leases | undefined;
  /** The tenants this replica serves now (the tenancy layer's registry). */
  readonly tenants: { readonly serving: ReadonlyMap<string, ListenedTenant> };
  readonly cache: GatewayCache;
  readonly logger: Logger;
}

export interface GatewayEvents {
  readonly events: TenantEvents;
  /**
   * The cache as the rest of the app sees it (`app.cache`): a flush
   * (`invalidateTenant`) is a `configuration` event on every replica, since
   * any caller's set may read differently afterwards. Source changes
   * invalidate through the runtimes' own handle and are `source` events.
   */
  readonly cache: GatewayCache;
  /** Stops the producers, then closes the bus if the app opened it. */
  close(): Promise<void>;
}

/** The app's tenant events: the configured bus, the producers on it, and the flush that announces itself. */
export function openGatewayEvents(given: EventsOption | undefined, options: GatewayEventsOptions): GatewayEvents {
  const { tenants, cache } = options;
  const logger = options.logger.child({ component: 'tenant-events' });
  const bus =
    given?.bus ??
    openTenantEventBus({
      bus: options.replicaBus,
      redis: options.redis,
      leases: options.leases,
      namespace: given?.namespace,
      logger,
    });
  const owned = given?.bus === undefined;
  const events = createTenantEventProducers({
    bus,
    sourcesOf: (tenantId) => {
      const runtime = tenants.serving.get(tenantId);
      return runtime === undefined ? undefined : { runtime, sources: runtime.catalog.sources };
    },
    logger,
  });
  return {
    events,
    cache: {
      ...cache,
      async invalidateTenant(tenantId: string) {
        try {
          await cache.invalidateTenant(tenantId);
        } finally {
          events.publish({ type: 'configuration', tenantId });
        }
      },
    },
    async close() {
      await events.close();
      if (owned) await bus.close();
    },
  };
}

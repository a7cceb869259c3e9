import type { RedisConnection } from '@mcpgw/cache';
import type { Leases, Logger, ReplicaBus } from '@mcpgw/core';
import { createLocalLeases, createRedisLeases } from './leases.js';
import type { ReplicaTenantEventBus } from './tenant-event-bus.js';
import { createReplicaTenantEventBus } from './tenant-event-bus.js';

export interface OpenTenantEventBusOptions {
  /** The app's replica bus (its owner closes it). */
  readonly bus: ReplicaBus;
  /** The process's Redis connection (REDIS_URL), for the change-detection leases; unset: `leases`, else in-process ones. */
  readonly redis: RedisConnection | undefined;
  /** Without Redis, the leases of the bus's transport (advisory locks on a Postgres bus); their owner closes them. */
  readonly leases?: Leases | undefined;
  /** Topic and lease prefix (`<namespace>:events:`, `<namespace>:lease:`). Default `mcpgw`. */
  readonly namespace?: string | undefined;
  readonly logger: Logger;
}

/**
 * The tenant events the configuration asks for, on the app's replica bus:
 * leases keep each source's detection on one replica, in Redis with Redis
 * and as advisory locks on a Postgres bus; in process (one replica), every
 * lease is held here. Nothing waits for the transport here:
 * until it answers, publishes are owed to the other replicas as `stale`.
 */
export function openTenantEventBus(options: OpenTenantEventBusOptions): ReplicaTenantEventBus {
  const namespace = options.namespace ?? 'mcpgw';
  return createReplicaTenantEventBus({
    bus: options.bus,
    leases:
      options.redis !== undefined
        ? createRedisLeases({ redis: options.redis, prefix: `${namespace}:lease:` })
        : (options.leases ?? createLocalLeases()),
    namespace,
    logger: options.logger,
  });
}

import type { RedisConnection } from '@mcpgw/cache';
import type { Logger, ReplicaBus } from '@mcpgw/core';
import { createLocalLeases, createRedisLeases } from './leases.js';
import type { ReplicaTenantEventBus } from './tenant-event-bus.js';
import { createReplicaTenantEventBus } from './tenant-event-bus.js';

export interface OpenTenantEventBusOptions {
  /** The app's replica bus (its owner closes it). */
  readonly bus: ReplicaBus;
  /** The process's Redis connection (REDIS_URL), for the change-detection leases; unset: in-process leases. */
  readonly redis: RedisConnection | undefined;
  /** Topic and lease prefix (`<namespace>:events:`, `<namespace>:lease:`). Default `mcpgw`. */
  readonly namespace?: string | undefined;
  readonly logger: Logger;
}

/**
 * The tenant events the configuration asks for, on the app's replica bus:
 * with Redis, leases in Redis keep each source's detection on one replica;
 * without, every replica detects for its own listeners (and hears the
 * others' detections over the bus). Nothing waits for the transport here:
 * until it answers, publishes are owed to the other replicas as `stale`.
 */
export function openTenantEventBus(options: OpenTenantEventBusOptions): ReplicaTenantEventBus {
  const namespace = options.namespace ?? 'mcpgw';
  return createReplicaTenantEventBus({
    bus: options.bus,
    leases:
      options.redis === undefined
        ? createLocalLeases()
        : createRedisLeases({ redis: options.redis, prefix: `${namespace}:lease:` }),
    namespace,
    logger: options.logger,
  });
}

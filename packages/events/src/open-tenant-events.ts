import type { RedisConnection } from '@mcpgw/cache';
import type { Logger } from '@mcpgw/core';
import { createLocalTenantEventBus } from './local-tenant-event-bus.js';
import { createRedisTenantEventBus } from './redis-tenant-event-bus.js';
import type { TenantEventBus } from './tenant-events.js';

export interface OpenTenantEventBusOptions {
  /** The process's Redis connection (REDIS_URL); unset: the in-process bus (one replica). */
  readonly redis: RedisConnection | undefined;
  /** Channel prefix (see RedisTenantEventBusOptions.namespace). */
  readonly namespace?: string | undefined;
  readonly logger: Logger;
}

/**
 * The bus the configuration asks for: Redis pub/sub on the process's Redis connection when REDIS_URL is set,
 * else in-process. Nothing waits for Redis here: until it answers, publishes
 * are owed to the other replicas as `stale`, and listeners that were already
 * listening are told `stale` once it does.
 */
export function openTenantEventBus(options: OpenTenantEventBusOptions): TenantEventBus {
  if (options.redis === undefined) return createLocalTenantEventBus(options.logger);
  return createRedisTenantEventBus({
    redis: options.redis,
    logger: options.logger,
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
  });
}

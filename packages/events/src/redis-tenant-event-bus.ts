import type { Logger } from '@mcpgw/core';
import type { RedisConnection } from '@mcpgw/cache';
import { createRedisReplicaBus, openRedisConnection } from '@mcpgw/cache';
import { createRedisLeases } from './leases.js';
import type { ReplicaTenantEventBus, TenantEventBusStats } from './tenant-event-bus.js';
import { createReplicaTenantEventBus } from './tenant-event-bus.js';

export type RedisTenantEventBusOptions = (
  | {
      /** The process's Redis connection (its owner closes it); publishes use its command deadline. */
      readonly redis: RedisConnection;
    }
  | {
      /** REDIS_URL (one node, or `redis+cluster://` seeds), for a bus on a connection of its own. */
      readonly url: string;
      /** A publish that takes longer counts as failed (and is made up for by `stale`). Default 1,000 ms. */
      readonly publishTimeoutMs?: number;
    }
) & {
  /** Prefix of the channels: `<namespace>:events:<tenantId>`. Default `mcpgw`. */
  readonly namespace?: string;
  readonly logger: Logger;
  /** A safety bound per tenant on this replica (stream limits sit far below it). Default 10,000. */
  readonly maxListenersPerTenant?: number;
  /** See RedisLeasesOptions.ttlMs. Default 5,000 ms. */
  readonly leaseTtlMs?: number;
  /** Tenants remembered as owed a `stale` after failed publishes; beyond it, the oldest is forgotten (logged). Default 10,000. */
  readonly maxOwedTenants?: number;
};

export type RedisTenantEventBusStats = TenantEventBusStats;

export interface RedisTenantEventBus extends ReplicaTenantEventBus {
  /** This replica's id in every frame it publishes (its own echo is recognised by it). */
  readonly replicaId: string;
  /** CLIENT SETNAME of the subscriber connection (operators find it in CLIENT LIST; tests kill it by it). */
  readonly subscriberName: string;
  /** CLIENT SETNAME of the publishing connection. */
  readonly publisherName: string;
}

/**
 * Tenant events on the Redis transport of the replica bus, with Redis leases
 * for change detection: the tenant event bus of createReplicaTenantEventBus
 * over createRedisReplicaBus, on the process's connection or one of its own
 * (tests and benchmarks give each replica its own, and read its connection
 * names to kill one).
 */
export function createRedisTenantEventBus(options: RedisTenantEventBusOptions): RedisTenantEventBus {
  const { logger } = options;
  const namespace = options.namespace ?? 'mcpgw';
  const owned = !('redis' in options);
  const connection =
    'redis' in options
      ? options.redis
      : openRedisConnection({ url: options.url, logger, commandTimeoutMs: options.publishTimeoutMs ?? 1000 });
  const bus = createRedisReplicaBus(connection);
  const events = createReplicaTenantEventBus({
    bus,
    leases: createRedisLeases({
      redis: connection,
      prefix: `${namespace}:lease:`,
      ...(options.leaseTtlMs === undefined ? {} : { ttlMs: options.leaseTtlMs }),
    }),
    namespace,
    logger,
    ...(options.maxListenersPerTenant === undefined ? {} : { maxListenersPerTenant: options.maxListenersPerTenant }),
    ...(options.maxOwedTenants === undefined ? {} : { maxOwedTenants: options.maxOwedTenants }),
  });
  return {
    ...events,
    replicaId: bus.replicaId,
    subscriberName: connection.subscriberName,
    publisherName: connection.clientName,
    async close() {
      await events.close();
      await bus.close();
      if (owned) await connection.close();
    },
  };
}

import type { Logger } from '@mcpgw/core';
import type { RedisConnection } from '@mcpgw/cache';
import { openRedisConnection } from '@mcpgw/cache';
import { createRedisLeases } from './leases.js';
import { TenantListeners } from './tenant-listeners.js';
import type { TenantEvent, TenantEventBus, TenantEventListener } from './tenant-events.js';
import { decodeEnvelope, encodeEnvelope, tenantChannel } from './tenant-event-wire.js';

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

export interface RedisTenantEventBusStats {
  /** Messages published to Redis. */
  readonly published: number;
  /** Publishes that failed or could not be sent (Redis down); each owes its tenant a `stale`. */
  readonly publishFailed: number;
  /** Messages from other replicas delivered to listeners here. */
  readonly received: number;
  /** Malformed, oversized or foreign messages, dropped unread. */
  readonly dropped: number;
}

export interface RedisTenantEventBus extends TenantEventBus {
  /** This replica's id in every envelope it publishes (its own echo is recognised by it). */
  readonly replicaId: string;
  /** CLIENT SETNAME of the subscriber connection (operators find it in CLIENT LIST; tests kill it by it). */
  readonly subscriberName: string;
  /** CLIENT SETNAME of the publishing connection. */
  readonly publisherName: string;
  stats(): RedisTenantEventBusStats;
  /** Resolves true once both connections are up, false after `timeoutMs` (events then flow once Redis answers). */
  ready(timeoutMs: number): Promise<boolean>;
}

/**
 * Tenant events over Redis pub/sub, one channel per tenant, on the process's
 * subscriber connection, subscribed to a tenant's channel only while this
 * replica has a listener for that tenant. A publisher's own listeners get
 * the event at once, not from the echo (which is recognised by `origin` and
 * skipped). Nothing queues while Redis is away: a publish that cannot be sent
 * is counted and owed as a `stale` to the other replicas once Redis is back,
 * and after a gap in the subscription (the connection's resync) this
 * replica's listeners are told `stale` (they may have missed events) instead
 * of letting them miss them silently.
 */
export function createRedisTenantEventBus(options: RedisTenantEventBusOptions): RedisTenantEventBus {
  const { logger } = options;
  const prefix = `${options.namespace ?? 'mcpgw'}:events:`;
  const owned = !('redis' in options);
  const connection =
    'redis' in options
      ? options.redis
      : openRedisConnection({ url: options.url, logger, commandTimeoutMs: options.publishTimeoutMs ?? 1000 });
  const publisher = connection.client;
  const replicaId = connection.clientName.replace(/^mcpgw-/, '');
  const maxOwed = options.maxOwedTenants ?? 10_000;
  const stats = { published: 0, publishFailed: 0, received: 0, dropped: 0 };
  const owed = new Set<string>();
  const channels = new Map<string, () => void>();
  let closed = false;

  const listeners = new TenantListeners(logger, options.maxListenersPerTenant ?? 10_000, {
    first: (tenantId) => {
      const channel = tenantChannel(prefix, tenantId);
      channels.set(
        tenantId,
        connection.subscribe(channel, (message) => receive(channel, message)),
      );
    },
    last: (tenantId) => {
      channels.get(tenantId)?.();
      channels.delete(tenantId);
    },
  });

  let dropWarnings = 0;
  const drop = (reason: string) => {
    stats.dropped += 1;
    dropWarnings += 1;
    if ((dropWarnings & (dropWarnings - 1)) === 0) {
      logger.warn({ reason, dropped: stats.dropped }, 'a tenant event message from Redis was dropped');
    }
  };

  const receive = (channel: string, message: string) => {
    if (closed) return;
    if (!channel.startsWith(prefix)) return drop('foreign-channel');
    const decoded = decodeEnvelope(channel.slice(prefix.length), message);
    if (!decoded.ok) return drop(decoded.reason);
    if (decoded.origin === replicaId) return;
    stats.received += 1;
    listeners.deliver(decoded.event);
  };

  // The one resync rule (RedisConnection.onResync): whoever listened while the subscription did not hold
  // may have missed events, and reads again.
  const stopResync = connection.onResync((gap) => {
    if (!gap || closed) return;
    const tenants = listeners.tenants();
    for (const tenantId of tenants) listeners.deliver({ type: 'stale', tenantId });
    logger.debug({ tenants: tenants.length }, 'tenant event listeners told their view may be stale');
  });
  // Publishes owed while Redis was away go out as soon as the command client is back.
  const onPublisherReady = () => payOwed();
  publisher.on('ready', onPublisherReady);

  function payOwed(): void {
    for (const tenantId of [...owed]) {
      owed.delete(tenantId);
      send({ type: 'stale', tenantId });
    }
  }

  /** Publishes to the other replicas; a failure owes the tenant a `stale` once Redis answers again. */
  function send(event: TenantEvent): void {
    const owe = () => {
      stats.publishFailed += 1;
      if (owed.size >= maxOwed && !owed.has(event.tenantId)) {
        const oldest = owed.values().next().value as string;
        owed.delete(oldest);
        logger.warn({ tenant: oldest }, 'too many tenants owed a stale event; one is forgotten');
      }
      owed.add(event.tenantId);
    };
    if (publisher.status !== 'ready') return owe();
    publisher.publish(tenantChannel(prefix, event.tenantId), encodeEnvelope(replicaId, event)).then(() => {
      stats.published += 1;
      // A publish that timed out without the connection dropping is made up for by the next one that works.
      if (owed.size > 0) payOwed();
    }, owe);
  }

  return {
    leases: createRedisLeases({
      redis: connection,
      prefix: `${options.namespace ?? 'mcpgw'}:lease:`,
      ...(options.leaseTtlMs === undefined ? {} : { ttlMs: options.leaseTtlMs }),
    }),
    replicaId,
    subscriberName: connection.subscriberName,
    publisherName: connection.clientName,
    publish(event) {
      if (closed) return;
      // This replica's listeners now, never from the echo.
      listeners.deliver(event);
      send(event);
    },
    subscribe(tenantId: string, listener: TenantEventListener) {
      if (closed) return () => {};
      return listeners.add(tenantId, listener);
    },
    stats: () => ({ ...stats }),
    ready: (timeoutMs) => connection.ready(timeoutMs),
    async close() {
      if (closed) return;
      closed = true;
      stopResync();
      publisher.off('ready', onPublisherReady);
      listeners.clear();
      for (const stop of channels.values()) stop();
      channels.clear();
      if (owned) await connection.close();
    },
  };
}

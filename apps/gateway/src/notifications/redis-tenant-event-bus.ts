import { randomBytes } from 'node:crypto';
import type { Cluster, Redis, RedisOptions } from 'ioredis';
import type { Logger } from '@mcpgw/core';
import { errorSummary } from '@mcpgw/core';
import { connectRedis, whenRedisReady } from '@mcpgw/cache';
import { RecentSourceEvents } from './recent-source-events.js';
import { TenantListeners } from './tenant-listeners.js';
import type { TenantEvent, TenantEventBus, TenantEventListener } from './tenant-events.js';
import { decodeEnvelope, encodeEnvelope, tenantChannel } from './tenant-event-wire.js';

/** A first connection within this long of creating the bus is a normal start, not an outage. */
const FIRST_CONNECTION_GRACE_MS = 1000;

export interface RedisTenantEventBusOptions {
  /** REDIS_URL (one node, or `redis+cluster://` seeds). */
  url: string;
  /** Prefix of the channels: `<namespace>:events:<tenantId>`. Default `mcpgw`. */
  namespace?: string;
  logger: Logger;
  /** A safety bound per tenant on this replica (stream limits sit far below it). Default 10,000. */
  maxListenersPerTenant?: number;
  /** See RecentSourceEvents: identical `source` events from two replicas within this window reach listeners once. Default 2,000 ms. */
  duplicateWindowMs?: number;
  /** A publish that takes longer counts as failed (and is made up for by `stale`). Default 1,000 ms. */
  publishTimeoutMs?: number;
  /** Tenants remembered as owed a `stale` after failed publishes; beyond it, the oldest is forgotten (logged). Default 10,000. */
  maxOwedTenants?: number;
}

export interface RedisTenantEventBusStats {
  /** Messages published to Redis. */
  readonly published: number;
  /** Publishes that failed or could not be sent (Redis down); each owes its tenant a `stale`. */
  readonly publishFailed: number;
  /** Messages from other replicas delivered to listeners here. */
  readonly received: number;
  /** Malformed, oversized or foreign messages, dropped unread. */
  readonly dropped: number;
  /** Identical `source` events from another replica within the window, not delivered again. */
  readonly duplicates: number;
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
 * Tenant events over Redis pub/sub, one channel per tenant, on a dedicated
 * subscriber connection that is subscribed to a tenant's channel only while
 * this replica has a listener for that tenant. A publisher's own listeners get
 * the event at once, not from the echo (which is recognised by `origin` and
 * skipped). Nothing queues while Redis is away: a publish that cannot be sent
 * is counted and owed as a `stale` to the other replicas once Redis is back,
 * and every reconnection of the subscriber tells this replica's listeners
 * `stale` (they may have missed events) instead of letting them miss them
 * silently.
 */
export function createRedisTenantEventBus(options: RedisTenantEventBusOptions): RedisTenantEventBus {
  const { logger } = options;
  const prefix = `${options.namespace ?? 'mcpgw'}:events:`;
  const replicaId = randomBytes(9).toString('base64url');
  const subscriberName = `mcpgw-events-${replicaId}`;
  const publisherName = `mcpgw-events-pub-${replicaId}`;
  const publishTimeoutMs = options.publishTimeoutMs ?? 1000;
  const maxOwed = options.maxOwedTenants ?? 10_000;
  const recent = new RecentSourceEvents(options.duplicateWindowMs ?? 2000);
  const stats = { published: 0, publishFailed: 0, received: 0, dropped: 0, duplicates: 0 };
  const common: RedisOptions = {
    connectTimeout: 1000,
    maxRetriesPerRequest: 0,
    // Nothing waits for Redis: commands fail at once while it is away; ready-time work catches up.
    enableOfflineQueue: false,
    retryStrategy: (times) => Math.min(times * 100, 1000),
  };
  const publisher = connectRedis(options.url, {
    ...common,
    commandTimeout: publishTimeoutMs,
    connectionName: publisherName,
  });
  // Subscriptions are restored by this module on 'ready' (not by ioredis), so it knows when they hold again.
  const subscriber = connectRedis(options.url, { ...common, autoResubscribe: false, connectionName: subscriberName });
  const owed = new Set<string>();
  let closed = false;

  const listeners = new TenantListeners(logger, options.maxListenersPerTenant ?? 10_000, {
    first: (tenantId) => {
      if (subscriber.status === 'ready') void command(subscriber.subscribe(tenantChannel(prefix, tenantId)));
    },
    last: (tenantId) => {
      if (subscriber.status === 'ready') void command(subscriber.unsubscribe(tenantChannel(prefix, tenantId)));
    },
  });

  const command = (pending: Promise<unknown>): Promise<void> =>
    pending.then(
      () => undefined,
      // A command lost with the connection is redone by the next 'ready'.
      () => undefined,
    );

  let dropWarnings = 0;
  const drop = (reason: string) => {
    stats.dropped += 1;
    dropWarnings += 1;
    if ((dropWarnings & (dropWarnings - 1)) === 0) {
      logger.warn({ reason, dropped: stats.dropped }, 'a tenant event message from Redis was dropped');
    }
  };

  subscriber.on('message', (channel: string, message: string) => {
    if (closed) return;
    if (!channel.startsWith(prefix)) return drop('foreign-channel');
    const decoded = decodeEnvelope(channel.slice(prefix.length), message);
    if (!decoded.ok) return drop(decoded.reason);
    if (decoded.origin === replicaId) return;
    if (!recent.admit(decoded.event, decoded.origin)) {
      stats.duplicates += 1;
      return;
    }
    stats.received += 1;
    listeners.deliver(decoded.event);
  });

  // 'ready' fires on the first connection and after every reconnection. Listeners that were
  // listening without a subscription may have missed events: after a reconnection, or when the
  // first connection took longer than a start normally does (Redis was away at start).
  const createdAt = Date.now();
  let subscriberWasUp = false;
  subscriber.on('ready', () => {
    const missed = subscriberWasUp || Date.now() - createdAt > FIRST_CONNECTION_GRACE_MS;
    const tenants = missed ? listeners.tenants() : [];
    const subscribing = listeners.tenants();
    const resubscribed =
      subscribing.length === 0
        ? Promise.resolve()
        : command(subscriber.subscribe(...subscribing.map((id) => tenantChannel(prefix, id))));
    void resubscribed.then(() => {
      if (closed) return;
      // Whoever listened while the subscription did not hold may have missed events.
      for (const tenantId of tenants) if (listeners.has(tenantId)) listeners.deliver({ type: 'stale', tenantId });
    });
    if (subscriberWasUp)
      logger.info(
        { tenants: tenants.length },
        'tenant event subscription restored; listeners told their view may be stale',
      );
    subscriberWasUp = true;
  });
  subscriber.on('error', () => undefined);
  let publisherUp = false;
  publisher.on('ready', () => {
    if (!publisherUp) logger.info({}, 'tenant event bus connected to Redis');
    publisherUp = true;
    payOwed();
  });
  publisher.on('error', (error: Error) => {
    if (publisherUp)
      logger.warn(
        { err: errorSummary(error) },
        'tenant event bus lost Redis; other replicas will be told stale when it is back',
      );
    publisherUp = false;
  });

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
    replicaId,
    subscriberName,
    publisherName,
    publish(event) {
      if (closed) return;
      // This replica's listeners now, never from the echo.
      if (recent.admit(event, replicaId)) listeners.deliver(event);
      send(event);
    },
    subscribe(tenantId: string, listener: TenantEventListener) {
      if (closed) return () => {};
      return listeners.add(tenantId, listener);
    },
    stats: () => ({ ...stats }),
    ready: async (timeoutMs) =>
      (await Promise.all([whenRedisReady(publisher, timeoutMs), whenRedisReady(subscriber, timeoutMs)])).every(Boolean),
    async close() {
      if (closed) return;
      closed = true;
      listeners.clear();
      await Promise.allSettled([quit(subscriber), quit(publisher)]);
    },
  };
}

async function quit(connection: Redis | Cluster): Promise<void> {
  if (connection.status === 'ready') await connection.quit().catch(() => undefined);
  connection.disconnect();
}

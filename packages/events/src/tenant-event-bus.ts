import type { Leases, Logger, ReplicaBus } from '@mcpgw/core';
import { TenantListeners } from './tenant-listeners.js';
import type { TenantEvent, TenantEventBus, TenantEventListener } from './tenant-events.js';
import { decodeEnvelope, encodeEnvelope, tenantTopic, wireChanges } from './tenant-event-wire.js';

export interface ReplicaTenantEventBusOptions {
  /** The replica bus events travel on (Redis, Postgres or in process); its owner closes it. */
  readonly bus: ReplicaBus;
  /** Where a source's change detection runs: Redis leases with Redis, else in-process ones. */
  readonly leases: Leases;
  /** Prefix of the topics: `<namespace>:events:<tenantId>`. Default `mcpgw`. */
  readonly namespace?: string;
  readonly logger: Logger;
  /** A safety bound per tenant on this replica (stream limits sit far below it). Default 10,000. */
  readonly maxListenersPerTenant?: number;
  /** Tenants remembered as owed a `stale` after failed publishes; beyond it, the oldest is forgotten (logged). Default 10,000. */
  readonly maxOwedTenants?: number;
  /** How often owed `stale` events are tried again. Default 1,000 ms. */
  readonly retryMs?: number;
}

export interface TenantEventBusStats {
  /** Messages published on the bus. */
  readonly published: number;
  /** Publishes that failed or could not be sent (the transport away, a message too large); each owes its tenant a `stale`. */
  readonly publishFailed: number;
  /** Messages from other replicas delivered to listeners here. */
  readonly received: number;
  /** Malformed, oversized or foreign messages, dropped unread. */
  readonly dropped: number;
}

/** A tenant event bus over a replica bus, with its counters. */
export interface ReplicaTenantEventBus extends TenantEventBus {
  stats(): TenantEventBusStats;
  /** Resolves true once the transport is connected, false after `timeoutMs` (events then flow once it is). */
  ready(timeoutMs: number): Promise<boolean>;
}

/**
 * Tenant events on the replica bus (docs/adr/0012-one-bus-two-transports.md):
 * one topic per tenant, subscribed only while this replica has a listener
 * for that tenant. A publisher's own listeners get the event at once, not
 * from the echo (which the bus marks, and is skipped). A source change is
 * split into pieces that fit one message of the transport. Nothing queues: a
 * publish that cannot be sent is counted and owed as a `stale` to the other
 * replicas, tried again every `retryMs`; after a gap on the bus this
 * replica's listeners are told `stale` (they may have missed events) instead
 * of letting them miss them silently.
 */
export function createReplicaTenantEventBus(options: ReplicaTenantEventBusOptions): ReplicaTenantEventBus {
  const { bus, logger } = options;
  const prefix = `${options.namespace ?? 'mcpgw'}:events:`;
  const maxOwed = options.maxOwedTenants ?? 10_000;
  const stats = { published: 0, publishFailed: 0, received: 0, dropped: 0 };
  const owed = new Set<string>();
  const topics = new Map<string, () => void>();
  let closed = false;

  const listeners = new TenantListeners(logger, options.maxListenersPerTenant ?? 10_000, {
    first: (tenantId) => {
      topics.set(
        tenantId,
        bus.subscribe(tenantTopic(prefix, tenantId), (message, own) => receive(tenantId, message, own)),
      );
    },
    last: (tenantId) => {
      topics.get(tenantId)?.();
      topics.delete(tenantId);
    },
  });

  let dropWarnings = 0;
  const drop = (reason: string) => {
    stats.dropped += 1;
    dropWarnings += 1;
    if ((dropWarnings & (dropWarnings - 1)) === 0) {
      logger.warn({ reason, dropped: stats.dropped }, 'a tenant event message from the replica bus was dropped');
    }
  };

  const receive = (tenantId: string, message: string, own: boolean) => {
    if (closed || own) return;
    const decoded = decodeEnvelope(tenantId, message);
    if (!decoded.ok) return drop(decoded.reason);
    stats.received += 1;
    listeners.deliver(decoded.event);
  };

  // The one resync rule: whoever listened while the bus did not hold may have missed events, and reads again.
  const stopGap = bus.onGap(() => {
    if (closed) return;
    const tenants = listeners.tenants();
    for (const tenantId of tenants) listeners.deliver({ type: 'stale', tenantId });
    logger.debug({ tenants: tenants.length }, 'tenant event listeners told their view may be stale');
  });
  const retry = setInterval(() => payOwed(), options.retryMs ?? 1000);
  retry.unref();

  function payOwed(): void {
    for (const tenantId of [...owed]) {
      owed.delete(tenantId);
      send({ type: 'stale', tenantId });
    }
  }

  /** Publishes to the other replicas; a failure owes the tenant a `stale` until a publish goes out. */
  function send(event: TenantEvent): void {
    if (closed) return;
    const owe = () => {
      stats.publishFailed += 1;
      if (owed.size >= maxOwed && !owed.has(event.tenantId)) {
        const oldest = owed.values().next().value as string;
        owed.delete(oldest);
        logger.warn({ tenant: oldest }, 'too many tenants owed a stale event; one is forgotten');
      }
      owed.add(event.tenantId);
    };
    bus.publish(tenantTopic(prefix, event.tenantId), encodeEnvelope(event)).then(() => {
      stats.published += 1;
      // A publish that failed without the transport dropping is made up for by the next one that works.
      if (owed.size > 0) payOwed();
    }, owe);
  }

  return {
    leases: options.leases,
    publish(event) {
      if (closed) return;
      const pieces: TenantEvent[] =
        event.type === 'source'
          ? wireChanges(event.change, bus.maxMessageBytes).map((change) => ({ ...event, change }))
          : [event];
      for (const piece of pieces) {
        // This replica's listeners now, never from the echo.
        listeners.deliver(piece);
        send(piece);
      }
    },
    subscribe(tenantId: string, listener: TenantEventListener) {
      if (closed) return () => {};
      return listeners.add(tenantId, listener);
    },
    stats: () => ({ ...stats }),
    ready: (timeoutMs) => bus.ready(timeoutMs),
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(retry);
      stopGap();
      listeners.clear();
      for (const stop of topics.values()) stop();
      topics.clear();
    },
  };
}

import type { Logger, Source } from '@mcpgw/core';
import { TenantListeners } from './tenant-listeners.js';
import type { TenantEvent, TenantEventBus, TenantEventListener } from './tenant-events.js';

export interface TenantEventProducersOptions {
  /** Where events travel (the replica bus), and whose leases decide where detection runs. Not closed by these producers. */
  readonly bus: TenantEventBus;
  /** The sources of the runtime serving a tenant now; undefined while none serves. */
  readonly sourcesOf: (
    tenantId: string,
  ) => { readonly runtime: object; readonly sources: readonly Source[] } | undefined;
  readonly logger: Logger;
  /** See RedisTenantEventBusOptions.maxListenersPerTenant. Default 10,000. */
  readonly maxListenersPerTenant?: number;
}

/** The gateway's tenant events: the bus as consumers use it, plus the hook the control-plane sync calls. */
export interface TenantEvents extends TenantEventBus {
  /**
   * This replica now serves a new runtime for the tenant, or none (removed),
   * and its caches are dropped: its sources are watched afresh and this
   * replica's listeners get `configuration`. Each replica hears the
   * control-plane change itself, so this does not travel over the bus.
   */
  tenantChanged(tenantId: string): void;
  /**
   * Ids of the sources watched for the tenant on this replica (empty while
   * nobody listens here): their change detection runs here while this
   * replica holds their lease, and their changes arrive over the bus otherwise.
   */
  watchedSources(tenantId: string): readonly string[];
  /** Ids of the watched sources whose change detection runs on this replica now (it holds their lease). */
  detectingSources(tenantId: string): readonly string[];
}

interface Watch {
  readonly runtime: object | undefined;
  readonly sourceIds: readonly string[];
  /** The sources whose lease this replica holds. */
  readonly detecting: Set<string>;
  readonly stops: readonly (() => void)[];
}

/**
 * Produces tenant events on this replica. While at least one listener here
 * listens to a tenant, this replica contends for the lease of each source of
 * the tenant's serving runtime that has a change feed (`Source.watch`); the
 * replica holding a source's lease watches it and publishes what it reports
 * as a `source` event on the bus, so each change is detected once in the
 * deployment and every replica's listeners hear it. A replica that takes a
 * lease over from another tells every listener `stale` (changes between the
 * holder's end and the takeover went unnoticed). The watch follows runtime
 * swaps (`tenantChanged`) and ends with the last listener.
 */
export function createTenantEventProducers(options: TenantEventProducersOptions): TenantEvents {
  const { bus, logger } = options;
  const watches = new Map<string, Watch>();
  const fromBus = new Map<string, () => void>();
  let closed = false;

  const unwatch = (tenantId: string) => {
    const watch = watches.get(tenantId);
    watches.delete(tenantId);
    for (const stop of watch?.stops ?? []) stop();
  };

  const detect = (tenantId: string, source: Source, detecting: Set<string>): (() => void) => {
    let stopWatching: (() => void) | undefined;
    const stop = () => {
      stopWatching?.();
      stopWatching = undefined;
      detecting.delete(source.id);
    };
    const release = bus.leases.hold(`${tenantId}/${source.id}`, {
      acquired: (takeover) => {
        stop();
        detecting.add(source.id);
        // The bus splits a large burst into pieces that fit one message of its transport.
        stopWatching = source.watch!((change) =>
          bus.publish({ type: 'source', tenantId, sourceId: source.id, change }),
        );
        if (takeover) bus.publish({ type: 'stale', tenantId });
      },
      lost: stop,
    });
    return () => {
      release();
      stop();
    };
  };

  const watch = (tenantId: string) => {
    const current = options.sourcesOf(tenantId);
    if (watches.has(tenantId) && watches.get(tenantId)!.runtime === current?.runtime) return;
    unwatch(tenantId);
    const watched = (current?.sources ?? []).filter((source) => source.watch !== undefined);
    const detecting = new Set<string>();
    watches.set(tenantId, {
      runtime: current?.runtime,
      sourceIds: watched.map((source) => source.id),
      detecting,
      stops: watched.map((source) => detect(tenantId, source, detecting)),
    });
  };

  const listeners = new TenantListeners(logger, options.maxListenersPerTenant ?? 10_000, {
    first: (tenantId) => {
      fromBus.set(
        tenantId,
        bus.subscribe(tenantId, (event) => listeners.deliver(event)),
      );
      watch(tenantId);
    },
    last: (tenantId) => {
      fromBus.get(tenantId)?.();
      fromBus.delete(tenantId);
      unwatch(tenantId);
    },
  });

  return {
    publish: (event: TenantEvent) => bus.publish(event),
    subscribe(tenantId: string, listener: TenantEventListener) {
      if (closed) return () => {};
      return listeners.add(tenantId, listener);
    },
    tenantChanged(tenantId) {
      if (closed || !listeners.has(tenantId)) return;
      watch(tenantId);
      listeners.deliver({ type: 'configuration', tenantId });
    },
    leases: bus.leases,
    watchedSources: (tenantId) => watches.get(tenantId)?.sourceIds ?? [],
    detectingSources: (tenantId) => {
      const watch = watches.get(tenantId);
      return watch === undefined ? [] : watch.sourceIds.filter((id) => watch.detecting.has(id));
    },
    async close() {
      closed = true;
      for (const tenantId of [...watches.keys()]) unwatch(tenantId);
      for (const stop of fromBus.values()) stop();
      fromBus.clear();
      listeners.clear();
    },
  };
}

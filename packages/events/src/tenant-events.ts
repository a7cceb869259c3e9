import type { SourceChange } from '@mcpgw/core';
import type { Leases } from '@mcpgw/core';

/**
 * Something that may change what a tenant's callers see, in the shape that
 * travels between replicas. Live notifications (MCP 2026-07-28,
 * "Subscriptions": `notifications/resources/list_changed` and
 * `notifications/resources/updated`) are derived from these per caller: the
 * event itself is tenant-wide and never filtered by anyone's grants.
 */
export type TenantEvent =
  /** A source's change feed noticed resources come, go or read differently. */
  | { readonly type: 'source'; readonly tenantId: string; readonly sourceId: string; readonly change: SourceChange }
  /** The tenant's configuration (issuers, sources, grants) changed or its caches were flushed: any caller's set may differ. */
  | { readonly type: 'configuration'; readonly tenantId: string }
  /** Events may have been missed (the bus reconnected): every listener should treat its view as stale. */
  | { readonly type: 'stale'; readonly tenantId: string };

export type TenantEventListener = (event: TenantEvent) => void;

/**
 * Carries tenant events to every replica's listeners, on the replica bus
 * (Redis pub/sub, Postgres LISTEN/NOTIFY, or in process;
 * docs/adr/0012-one-bus-two-transports.md). A throwing listener never stops
 * delivery to the others.
 */
export interface TenantEventBus {
  /** Sends an event to every replica (this one included). Never throws; failures are logged. */
  publish(event: TenantEvent): void;
  /** Listens to one tenant's events on this replica; returns the unsubscribe function (safe to call twice). */
  subscribe(tenantId: string, listener: TenantEventListener): () => void;
  /**
   * Leases on this bus's deployment: a source's change detection runs on the
   * replica holding its lease (docs/adr/0010-one-replica-bus.md).
   */
  readonly leases: Leases;
  /** Stops delivery and releases connections. */
  close(): Promise<void>;
}

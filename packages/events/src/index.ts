// The public surface of @mcpgw/events: change events between replicas and the
// listen streams that turn them into each caller's notifications
// (docs/adr/0006-tenant-events.md, docs/adr/0010-one-replica-bus.md). Tests
// of this package reach the other modules by path (../src/<module>.js).

/** A tenant event (`source`, `configuration`, `stale`), a listener, and the bus that carries them to every replica. */
export type { TenantEvent, TenantEventBus, TenantEventListener } from './tenant-events.js';
/** Tenant events on any replica bus (Redis, Postgres, in process), with its counters (docs/adr/0012-one-bus-two-transports.md). */
export { createReplicaTenantEventBus } from './tenant-event-bus.js';
export type { ReplicaTenantEventBus, ReplicaTenantEventBusOptions, TenantEventBusStats } from './tenant-event-bus.js';
/** The in-process bus of a single replica. */
export { createLocalTenantEventBus } from './local-tenant-event-bus.js';
/** Tenant events on the Redis transport, on the process's Redis connection (or one of its own), with Redis leases. */
export { createRedisTenantEventBus } from './redis-tenant-event-bus.js';
export type {
  RedisTenantEventBus,
  RedisTenantEventBusOptions,
  RedisTenantEventBusStats,
} from './redis-tenant-event-bus.js';
/** Leases that keep a piece of work (a source's change detection) on one replica: in Redis, or in-process. */
export { createLocalLeases, createRedisLeases } from './leases.js';
export type { LeaseHandlers, Leases, RedisLeasesOptions } from './leases.js';
/** The app's tenant events: the configured bus, the change-detection producers on it, and the announcing flush. */
export { openGatewayEvents } from './gateway-events.js';
export type { EventsOption, GatewayEvents, GatewayEventsOptions, TenantEvents } from './gateway-events.js';
/** What events and streams need of a tenant's serving runtime (the tenancy layer's runtime satisfies it). */
export type { ListenedSourceEntry, ListenedTenant } from './listened-tenant.js';
/** The registry of this replica's open `subscriptions/listen` streams and its caps. */
export { createListenStreams } from './listen-streams.js';
export type { ListenStreamLimits, ListenStreams, OpenStream, StreamSlot } from './listen-streams.js';
/** A caller's resource set under the serving runtime, and the digests that tell whether it moved. */
export { readDigests, resolveCallerView, viewDigest, visibleSourceOf } from './caller-view.js';
export type { CallerView, StreamCaller } from './caller-view.js';
/** What a backend identity lists of a source, shared by the listen streams of that identity (one listing per event). */
export { createBackendViews } from './backend-views.js';
export type { BackendView, BackendViews, BackendViewsOptions } from './backend-views.js';
/** The subscribed URIs a listen stream honors: seen under the caller's grants and, where it applies, backend identity. */
export { honoredSubscriptions } from './honored-subscriptions.js';
/** One caller's subscription: tenant events in, the notifications this caller may receive out. */
export { startCallerSubscription } from './caller-subscription.js';
export type { CallerSubscriptionOptions, CompletionReason, SubscriptionOutput } from './caller-subscription.js';

import type { GatewayCache } from '@mcpgw/cache';
import { createPostgresLeases } from '@mcpgw/control-plane';
import { errorSummary } from '@mcpgw/core';
import fastifyPlugin from 'fastify-plugin';
import type { EventsOption, TenantEvents } from '@mcpgw/events';
import { openGatewayEvents } from '@mcpgw/events';

declare module 'fastify' {
  interface FastifyInstance {
    /** Tenant change events on this replica; live notifications subscribe here (docs/adr/0006-tenant-events.md). */
    events: TenantEvents;
    /** Both cache layers: `metrics()` per tenant, and `invalidateTenant(id)`, a flush every replica hears of. */
    cache: GatewayCache;
  }
}

export interface EventsPluginOptions {
  /** Where tenant change events travel; default: the app's replica bus. */
  events?: EventsOption | undefined;
}

/**
 * Opens this replica's tenant events (docs/adr/0006-tenant-events.md) and
 * decorates `app.cache`, the shared cache whose flush is a `configuration`
 * event to every replica. A source's change detection runs where its lease
 * is held: in Redis with Redis, as an advisory lock when the replica bus
 * rides Postgres (docs/adr/0012-one-bus-two-transports.md), here otherwise.
 * Stops the producers, and closes a bus and leases it opened, with the app.
 */
export const eventsPlugin = fastifyPlugin<EventsPluginOptions>(
  async (app, options) => {
    const { config, logger } = app.settings;
    const url = config.env.DATABASE_URL;
    const log = logger.child({ component: 'leases' });
    const leases =
      options.events?.bus === undefined && app.replicaBus.transport === 'postgres' && url !== undefined
        ? createPostgresLeases({
            url,
            onLost: (error) =>
              log.warn({ err: errorSummary(error) }, 'lease connection to Postgres lost; detecting for this replica'),
          })
        : undefined;
    const live = openGatewayEvents(options.events, {
      replicaBus: app.replicaBus,
      redis: app.redis,
      leases,
      tenants: app.tenants,
      cache: app.gatewayCache,
      logger,
    });
    app.decorate('events', live.events);
    app.decorate('cache', live.cache);
    app.addHook('onClose', async () => {
      await live.close();
      await leases?.close();
    });
  },
  {
    name: 'mcpgw-events',
    dependencies: ['mcpgw-settings', 'mcpgw-redis', 'mcpgw-replica-bus', 'mcpgw-cache', 'mcpgw-tenants'],
  },
);

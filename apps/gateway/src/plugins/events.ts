import type { GatewayCache } from '@mcpgw/cache';
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
 * event to every replica. Stops the producers, and closes a bus it opened,
 * with the app.
 */
export const eventsPlugin = fastifyPlugin<EventsPluginOptions>(
  async (app, options) => {
    const { logger } = app.settings;
    const live = openGatewayEvents(options.events, {
      replicaBus: app.replicaBus,
      redis: app.redis,
      tenants: app.tenants,
      cache: app.gatewayCache,
      logger,
    });
    app.decorate('events', live.events);
    app.decorate('cache', live.cache);
    app.addHook('onClose', async () => live.close());
  },
  {
    name: 'mcpgw-events',
    dependencies: ['mcpgw-settings', 'mcpgw-redis', 'mcpgw-replica-bus', 'mcpgw-cache', 'mcpgw-tenants'],
  },
);

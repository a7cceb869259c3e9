import type { TenantTraffic } from '@mcpgw/cache';
import { createTenantTraffic } from '@mcpgw/cache';
import fastifyPlugin from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Each tenant's requests, errors, result-cache lookups and latency per
     * minute over the last hour, for the console's charts: summed over every
     * replica in Redis when REDIS_URL is set, this process's otherwise.
     * Counted by requestObservationPlugin and the tenants' cache (tenantsPlugin).
     */
    tenantTraffic: TenantTraffic;
  }
}

export const trafficPlugin = fastifyPlugin(
  async (app) => {
    const traffic = createTenantTraffic({
      redis: app.redis,
      // Keys name the tenant by the cache's keyed tag, never in the clear.
      tenantTag: app.settings.tenantTag,
      logger: app.settings.logger.child({ component: 'traffic' }),
    });
    app.decorate('tenantTraffic', traffic);
    app.addHook('onClose', async () => traffic.close());
  },
  { name: 'mcpgw-traffic', dependencies: ['mcpgw-settings', 'mcpgw-redis'] },
);

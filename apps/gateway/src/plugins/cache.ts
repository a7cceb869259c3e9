import type { GatewayCache } from '@mcpgw/cache';
import { createGatewayCache } from '@mcpgw/cache';
import fastifyPlugin from 'fastify-plugin';
import { cacheOperations } from '../observability/cache-operations.js';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The store both cache layers share (each source's pages, each caller's
     * results), as the tenant runtimes and the control-plane sync use it.
     * `app.cache` is the same cache as the rest of the app sees it (eventsPlugin).
     */
    gatewayCache: GatewayCache;
  }
}

export interface CacheOptions {
  /**
   * The cache to serve from, which its caller closes after the app; absent:
   * Redis when REDIS_URL is set, else in-process, keyed from the process
   * secret, and closed with the app.
   */
  cache?: GatewayCache | undefined;
}

/**
 * Decorates `app.gatewayCache` (on the process's Redis connection, redisPlugin; invalidations on the replica bus,
 * replicaBusPlugin), reports the cache's counters to the metrics.
 */
export const cachePlugin = fastifyPlugin<CacheOptions>(
  async (app, options) => {
    const { keys, logger } = app.settings;
    const cache =
      options.cache ??
      createGatewayCache({
        redis: app.redis,
        bus: app.replicaBus,
        key: keys.cacheKey,
        logger: logger.child({ component: 'cache' }),
      });
    app.decorate('gatewayCache', cache);
    if (options.cache === undefined) app.addHook('onClose', async () => cache.close());
    app.metrics.readFrom({
      cacheOperations: () => cacheOperations(cache.metrics()),
      redisCircuitOpen: () => cache.circuitOpen(),
    });
  },
  { name: 'mcpgw-cache', dependencies: ['mcpgw-settings', 'mcpgw-metrics', 'mcpgw-redis', 'mcpgw-replica-bus'] },
);

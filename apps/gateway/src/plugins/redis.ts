import type { RedisConnection } from '@mcpgw/cache';
import { openRedisConnection } from '@mcpgw/cache';
import fastifyPlugin from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The process's one Redis connection when REDIS_URL is set (a command
     * client and a subscriber), shared by the cache, the rate limits, the
     * leases and the replica bus's Redis transport (docs/adr/0010-one-replica-bus.md,
     * docs/adr/0012-one-bus-two-transports.md); undefined without Redis.
     */
    redis: RedisConnection | undefined;
  }
}

/** Opens the Redis connection once, waits for it once (2 s, then starts anyway), and closes it with the app. */
export const redisPlugin = fastifyPlugin(
  async (app) => {
    const { config, logger } = app.settings;
    const redis =
      config.env.REDIS_URL === undefined
        ? undefined
        : openRedisConnection({ url: config.env.REDIS_URL, logger: logger.child({ component: 'redis' }) });
    app.decorate('redis', redis);
    if (redis === undefined) return;
    app.addHook('onClose', async () => redis.close());
    if (!(await redis.ready(2000))) {
      logger.warn(
        {},
        'Redis does not answer yet: requests are served uncached and rate limits count in process until it does',
      );
    }
  },
  { name: 'mcpgw-redis', dependencies: ['mcpgw-settings'] },
);

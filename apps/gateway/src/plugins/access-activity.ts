import type { AccessActivity } from '@mcpgw/cache';
import { createAccessActivity } from '@mcpgw/cache';
import fastifyPlugin from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Which callers read or listed which resources of each tenant within
     * ACCESS_ACTIVITY_RETENTION_HOURS, for the console (docs/security.md,
     * "Access activity"); recorded by requestObservationPlugin.
     */
    accessActivity: AccessActivity;
  }
}

export const accessActivityPlugin = fastifyPlugin(
  async (app) => {
    const { env } = app.settings.config;
    const activity = createAccessActivity({
      redis: app.redis,
      // Keys name the tenant by the cache's keyed tag, never in the clear.
      tenantTag: app.settings.tenantTag,
      retentionMs: env.ACCESS_ACTIVITY_RETENTION_HOURS * 3_600_000,
      maxEntries: env.ACCESS_ACTIVITY_MAX_ENTRIES,
      logger: app.settings.logger.child({ component: 'access-activity' }),
    });
    app.decorate('accessActivity', activity);
    // What is not sent yet goes out before the Redis connection closes.
    app.addHook('onClose', async () => activity.close());
  },
  { name: 'mcpgw-access-activity', dependencies: ['mcpgw-settings', 'mcpgw-redis'] },
);

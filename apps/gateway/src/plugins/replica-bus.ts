import type { ReplicaBus } from '@mcpgw/core';
import { createInProcessReplicaBus } from '@mcpgw/core';
import { createRedisReplicaBus } from '@mcpgw/cache';
import { CONTROL_PLANE_CHANNEL, openPostgresReplicaBus } from '@mcpgw/control-plane';
import type { ControlPlane } from '@mcpgw/tenancy';
import { revisionsTopic } from '@mcpgw/tenancy';
import { errorSummary } from '@mcpgw/core';
import fastifyPlugin from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The one way this replica learns of change from the others
     * (docs/adr/0012-one-bus-two-transports.md): configuration revisions, cache
     * invalidations and source changes. Redis pub/sub with REDIS_URL, else
     * Postgres LISTEN/NOTIFY on a Postgres control plane, else in process.
     */
    replicaBus: ReplicaBus;
  }
}

export interface ReplicaBusPluginOptions {
  /** The control plane served from: without Redis, a Postgres one carries the bus. */
  controlPlane: ControlPlane;
}

/** Opens the replica bus on the transport the deployment has, and closes it with the app. */
export const replicaBusPlugin = fastifyPlugin<ReplicaBusPluginOptions>(
  async (app, { controlPlane }) => {
    const { config, logger } = app.settings;
    const url = config.env.DATABASE_URL;
    let bus: ReplicaBus;
    if (app.redis !== undefined) bus = createRedisReplicaBus(app.redis);
    else if (url !== undefined && controlPlane.db.engine === 'postgres') {
      const log = logger.child({ component: 'replica-bus' });
      bus = await openPostgresReplicaBus({
        url,
        db: controlPlane.db,
        // The control plane's own NOTIFY at commit is the revision message: the writing transaction publishes it.
        channelTopics: { [CONTROL_PLANE_CHANNEL]: revisionsTopic() },
        onLost: (error) =>
          log.warn({ err: errorSummary(error) }, 'replica bus connection to Postgres lost; reconnecting'),
      });
    } else bus = createInProcessReplicaBus();
    app.decorate('replicaBus', bus);
    app.addHook('onClose', async () => bus.close());
  },
  { name: 'mcpgw-replica-bus', dependencies: ['mcpgw-settings', 'mcpgw-redis'] },
);

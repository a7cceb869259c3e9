import fastifyPlugin from 'fastify-plugin';
import { createBackendViews, createListenStreams } from '@mcpgw/events';
import type { ListenStreams } from '@mcpgw/events';
import type { ListenContext } from '../routes/listen-stream.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The open `subscriptions/listen` streams of this replica: `count(tenantId?)`. */
    listenStreams: ListenStreams;
    /** What the MCP route serves `subscriptions/listen` with. */
    listenContext: ListenContext;
  }
}

/**
 * Sets up `subscriptions/listen`: the stream registry with the configured
 * caps, and the shutdown order: every stream gets its completion in
 * `preClose`, before the server stops and waits on open connections
 * (2026-07-28 basic/patterns/subscriptions, "Graceful Closure").
 */
export const listenPlugin = fastifyPlugin(
  async (app) => {
    const { env } = app.settings.config;
    const { metrics } = app;
    const streams = createListenStreams({
      limits: {
        perPrincipal: env.LISTEN_MAX_STREAMS_PER_PRINCIPAL,
        perTenant: env.LISTEN_MAX_STREAMS_PER_TENANT,
        total: env.LISTEN_MAX_STREAMS,
      },
      keepAliveMs: env.LISTEN_KEEPALIVE_MS,
      opened: () => metrics.listenStreamOpened(),
    });
    app.decorate('listenStreams', streams);
    app.decorate('listenContext', {
      streams,
      bus: app.events,
      tenants: app.tenants.serving,
      listChangedIntervalMs: env.LISTEN_LIST_CHANGED_INTERVAL_MS,
      acknowledged: app.requestMetrics.listenAcknowledged,
      // One listing per backend identity and change for every stream of this replica.
      backendViews: createBackendViews({ logger: app.settings.logger }),
    });
    app.addHook('preClose', async () => streams.completeAll());
  },
  {
    name: 'mcpgw-listen',
    dependencies: ['mcpgw-settings', 'mcpgw-metrics', 'mcpgw-request-observation', 'mcpgw-tenants', 'mcpgw-events'],
  },
);

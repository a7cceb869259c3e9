import fastifyPlugin from 'fastify-plugin';
import type { HealthMonitor } from '@mcpgw/tenancy';
import { createHealthMonitor } from '@mcpgw/tenancy';

declare module 'fastify' {
  interface FastifyInstance {
    /** The background prober of every source and the cache (probing once the app listens). */
    healthMonitor: HealthMonitor;
  }
}

/**
 * `/healthz`: the process serves requests (liveness). `/readyz`: this process
 * can take traffic (readiness): its configuration is loaded (it would not
 * exist otherwise) and it is listening. The cache's reachability is reported
 * as the background prober last saw it, without failing readiness: with Redis
 * down every replica serves uncached, and taking them all out of rotation
 * would turn a slower gateway into none. Nothing here names a tenant or a
 * source, and nothing here reaches a backend: one tenant's dead bucket is
 * that tenant's problem, logged for operators by the prober.
 */
/** The probe routes: answered whatever the Host, since orchestrators reach a pod by its address. */
export const PROBE_ROUTES: readonly string[] = ['/healthz', '/readyz'];

export const healthPlugin = fastifyPlugin(
  async (app) => {
    const monitor = createHealthMonitor({
      tenants: app.tenants.serving,
      cache: app.gatewayCache,
      logger: app.settings.logger.child({ component: 'health' }),
    });
    app.decorate('healthMonitor', monitor);
    app.metrics.readFrom({ sourcesUp: () => monitor.sources() });
    // Only a listening gateway probes its backends: `app.inject()` tests do not.
    app.addHook('onListen', async () => monitor.start());
    app.addHook('onClose', async () => monitor.stop());
    app.get('/healthz', async () => ({ status: 'ok' }));

    app.get('/readyz', async (_request, reply) => {
      const listening = app.server.listening;
      return reply
        .code(listening ? 200 : 503)
        .header('cache-control', 'no-store')
        .send({
          status: listening ? 'ready' : 'starting',
          checks: { configuration: 'loaded', listening, cache: monitor.cache },
        });
    });
  },
  { name: 'mcpgw-health', dependencies: ['mcpgw-settings', 'mcpgw-metrics', 'mcpgw-cache', 'mcpgw-tenants'] },
);

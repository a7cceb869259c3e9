import type { FastifyInstance } from 'fastify';
import type { HealthMonitor } from '@mcpgw/tenancy';

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

export function registerHealthRoutes(app: FastifyInstance, monitor: HealthMonitor): void {
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
}

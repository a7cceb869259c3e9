import type { FastifyInstance } from 'fastify';
import type { TenantRuntime } from '../tenant-runtime.js';

/**
 * `/healthz`: the process serves requests (liveness). `/readyz`: every
 * source answers its health probe (readiness); the body names failing
 * sources by tenant and id only, never by backend address.
 */
export function registerHealthRoutes(app: FastifyInstance, tenants: ReadonlyMap<string, TenantRuntime>): void {
  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    const checks = await Promise.all(
      [...tenants.values()].flatMap((tenant) =>
        tenant.catalog.sources.map(async (source) => {
          const health = await source.health(AbortSignal.timeout(2_000)).catch(() => ({ ok: false }));
          return { tenant: tenant.config.id, source: source.id, ok: health.ok };
        }),
      ),
    );
    const failing = checks.filter((check) => !check.ok);
    return reply
      .code(failing.length === 0 ? 200 : 503)
      .send({ status: failing.length === 0 ? 'ready' : 'degraded', failing });
  });
}

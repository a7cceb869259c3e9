import fastifyPlugin from 'fastify-plugin';
import type { ControlPlane } from '@mcpgw/tenancy';
import type { TenantSync } from '@mcpgw/tenancy';
import { revisionsTopic, startControlPlaneRelay, startTenantSync } from '@mcpgw/tenancy';

declare module 'fastify' {
  interface FastifyInstance {
    /** The control-plane store served from: the tenants and everything admins write. */
    controlPlane: ControlPlane;
    /** Following the control plane's changes. */
    tenantSync: TenantSync;
  }
}

export interface ControlPlaneSyncOptions {
  /** The store to serve from, which its caller opened (bootstrap file applied) and closes after the app. */
  controlPlane: ControlPlane;
}

/**
 * Serves the tenants the control plane holds, built into `app.tenants`
 * before the app is ready, and follows its changes live on the replica bus
 * (docs/adr/0012-one-bus-two-transports.md). On a bus that is not the
 * control plane's own database (Redis, or in process beside the embedded
 * store) this replica relays the control plane's NOTIFY onto it. A tenant or a
 * source that cannot start is served as unavailable, not a startup error:
 * one tenant's broken backend never keeps the others from being served.
 */
export const controlPlaneSyncPlugin = fastifyPlugin<ControlPlaneSyncOptions>(
  async (app, { controlPlane }) => {
    const { config, sourceFactories, logger } = app.settings;
    const cache = app.gatewayCache;
    const { events, limits, replicaBus } = app;
    const topic = revisionsTopic();
    app.decorate('controlPlane', controlPlane);
    const stopRelay =
      replicaBus.transport === 'postgres'
        ? async () => undefined
        : await startControlPlaneRelay({
            db: controlPlane.db,
            bus: replicaBus,
            topic,
            logger: logger.child({ component: 'control-plane' }),
          });
    const sync = await startTenantSync({
      bus: replicaBus,
      topic,
      store: controlPlane.store,
      registry: app.tenants,
      sourceFactories,
      validate: (entry) => config.validateTenant(entry, 'control plane'),
      build: app.buildTenantRuntime,
      invalidate: (tenantId) => cache.invalidateTenant(tenantId),
      noteRevision: (tenantId, revision) => cache.noteRevision(tenantId, revision),
      drop: async (tenantId, revision) => {
        await cache.dropTenant(tenantId, revision);
        await limits.rateLimits.forgetTenant(tenantId);
        // Who read what in a tenant that no longer exists is nobody's to see (docs/security.md, "Access activity").
        await app.accessActivity.forget(tenantId);
        // Its hosted authorization server's sessions, codes and interactions live in Redis, which no foreign
        // key cascades: a tenant re-created under the same id must not inherit them (docs/authorization-server.md).
        await app.authorizationServerStorage.forgetTenant(tenantId);
      },
      changed: (tenantId) => events.tenantChanged(tenantId),
      logger: logger.child({ component: 'control-plane' }),
    });
    app.decorate('tenantSync', sync);
    // Another replica started applying a newer revision (the cache's revision floor shows it): apply it here
    // too, even if this replica's own change signal was lost.
    const stopWatchingRevisions = cache.onNewerRevision((tenantId) => sync.request(tenantId));
    app.addHook('onClose', async () => {
      stopWatchingRevisions();
      await stopRelay();
      await sync.stop();
    });
    for (const tenant of app.tenants.serving.values()) {
      if (tenant.config.anonymous) {
        logger.warn(
          { tenant: tenant.config.id },
          `Tenant '${tenant.config.id}' is ANONYMOUS: anyone who can reach this loopback address reads all its resources. Development only.`,
        );
      }
    }
  },
  {
    name: 'mcpgw-control-plane-sync',
    dependencies: [
      'mcpgw-settings',
      'mcpgw-replica-bus',
      'mcpgw-cache',
      'mcpgw-tenants',
      'mcpgw-events',
      'mcpgw-limits',
      'mcpgw-access-activity',
      'mcpgw-authorization-server-store',
    ],
  },
);

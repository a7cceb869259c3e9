import fastifyPlugin from 'fastify-plugin';
import type { ControlPlane } from '@mcpgw/tenancy';
import type { TenantSync } from '@mcpgw/tenancy';
import { startTenantSync } from '@mcpgw/tenancy';

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
 * before the app is ready, and follows its changes live. A tenant or a
 * source that cannot start is served as unavailable, not a startup error:
 * one tenant's broken backend never keeps the others from being served.
 */
export const controlPlaneSyncPlugin = fastifyPlugin<ControlPlaneSyncOptions>(
  async (app, { controlPlane }) => {
    const { config, sourceFactories, logger } = app.settings;
    const cache = app.gatewayCache;
    const { events, limits } = app;
    app.decorate('controlPlane', controlPlane);
    const sync = await startTenantSync({
      db: controlPlane.db,
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
      },
      changed: (tenantId) => events.tenantChanged(tenantId),
      logger: logger.child({ component: 'control-plane' }),
    });
    app.decorate('tenantSync', sync);
    // Another replica started applying a newer revision (the cache's revision floor shows it): apply it here
    // too, even if this replica's own change signal was lost.
    const stopWatchingRevisions = cache.onNewerRevision((tenantId) => sync.request(tenantId));
    // The one resync rule: after a gap in the Redis subscription, every tenant is compared with the control plane.
    const stopResync =
      app.redis?.onResync((gap) => {
        if (gap) sync.resync();
      }) ?? (() => undefined);
    app.addHook('onClose', async () => {
      stopResync();
      stopWatchingRevisions();
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
    dependencies: ['mcpgw-settings', 'mcpgw-cache', 'mcpgw-tenants', 'mcpgw-events', 'mcpgw-limits'],
  },
);

import type { ControlPlaneStore, SqlDatabase } from '@mcpgw/control-plane';
import { CONTROL_PLANE_CHANNEL } from '@mcpgw/control-plane';
import type { TenantConfig } from '@mcpgw/config';
import type { Logger, SourceFactory } from '@mcpgw/core';
import { errorSummary } from '@mcpgw/core';
import type { TenantRegistry } from '../tenant-registry.js';
import type { TenantRuntime } from '../tenant-runtime.js';
import { loadTenantEntry, type TenantAdminWrites } from './tenant-entries.js';

/** A missed signal (a dropped LISTEN connection, a replica that was paused) is caught within this long. */
export const RECONCILE_INTERVAL_MS = 10_000;

export interface TenantSyncOptions {
  readonly db: SqlDatabase;
  readonly store: ControlPlaneStore;
  readonly registry: TenantRegistry<TenantRuntime>;
  /** The source types: a source is served with the credentials its type declares, no others. */
  readonly sourceFactories: ReadonlyMap<string, SourceFactory>;
  /** Checks a stored tenant by the bootstrap file's rules. */
  readonly validate: (entry: unknown) => Promise<TenantConfig>;
  /** Builds a runtime; the sources and issuers a tenant admin wrote connect under the egress policy. */
  readonly build: (tenant: TenantConfig, tenantAdminWrites: TenantAdminWrites) => Promise<TenantRuntime>;
  /** Drops the tenant's cached listings and results after its runtime changed. */
  readonly invalidate: (tenantId: string) => Promise<void>;
  /**
   * Told after a runtime was swapped in or removed and its caches were
   * dropped (even if dropping failed): live notifications tell this replica's
   * listeners then, once what they would ask again is served.
   */
  readonly changed?: (tenantId: string) => void;
  readonly logger: Logger;
  readonly reconcileIntervalMs?: number;
}

export interface TenantSync {
  /** Resolves once every refresh requested so far is done (tests, shutdown). */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Keeps this replica's tenant registry equal to the control plane: every
 * tenant at start, then each tenant a committed change names (Postgres
 * LISTEN/NOTIFY, delivered at commit), plus a periodic comparison of
 * revisions that catches what a lost signal missed. A tenant whose new
 * configuration does not validate or whose runtime fails to start keeps its
 * previous runtime; the registry's status says why.
 */
export async function startTenantSync(options: TenantSyncOptions): Promise<TenantSync> {
  const { registry, store, logger } = options;
  const pending = new Set<Promise<void>>();
  let stopped = false;

  const invalidated = async (tenantId: string): Promise<void> => {
    try {
      await options.invalidate(tenantId);
    } finally {
      options.changed?.(tenantId);
    }
  };

  const refresh = async (tenantId: string): Promise<void> => {
    const loaded = await loadTenantEntry(store, options.sourceFactories, tenantId);
    if (loaded === undefined) {
      if (registry.serving.has(tenantId)) {
        await registry.remove(tenantId);
        await invalidated(tenantId);
        logger.info({ tenant: tenantId }, 'tenant no longer served (deleted or suspended)');
      }
      return;
    }
    if (registry.status(tenantId)?.servingRevision === loaded.revision) return;
    const outcome = await registry.apply(
      tenantId,
      async () => options.build(await options.validate(loaded.entry), loaded.tenantAdminWrites),
      loaded.revision,
    );
    if (outcome.ok) {
      await invalidated(tenantId);
      logger.info({ tenant: tenantId, revision: loaded.revision }, 'tenant configuration applied');
    } else {
      logger.error(
        { tenant: tenantId, revision: loaded.revision, err: outcome.error.message },
        'tenant configuration not applied: the previous one keeps serving',
      );
    }
  };

  const request = (tenantId: string): void => {
    if (stopped) return;
    const work = refresh(tenantId).catch((error: unknown) =>
      logger.error({ tenant: tenantId, err: errorSummary(error) }, 'reading the tenant from the control plane failed'),
    );
    pending.add(work);
    void work.finally(() => pending.delete(work));
  };

  const reconcile = async (): Promise<void> => {
    const revisions = await store.revisions();
    for (const [tenantId, revision] of revisions) {
      if (registry.status(tenantId)?.servingRevision !== revision) request(tenantId);
    }
    for (const tenantId of registry.serving.keys()) if (!revisions.has(tenantId)) request(tenantId);
  };

  const stopListening = await options.db.listen(CONTROL_PLANE_CHANNEL, {
    onNotify: (tenantId) => request(tenantId),
    onResubscribed: () => void reconcile().catch(() => undefined),
    onLost: (error) => logger.warn({ err: errorSummary(error) }, 'control-plane change signal lost; reconnecting'),
  });
  await reconcile();
  await Promise.all([...pending]);

  const timer = setInterval(() => {
    reconcile().catch((error: unknown) =>
      logger.warn({ err: errorSummary(error) }, 'control-plane reconciliation failed; retrying'),
    );
  }, options.reconcileIntervalMs ?? RECONCILE_INTERVAL_MS);
  timer.unref();

  return {
    async settled() {
      while (pending.size > 0) await Promise.all([...pending]);
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await stopListening();
      await Promise.all([...pending]);
    },
  };
}

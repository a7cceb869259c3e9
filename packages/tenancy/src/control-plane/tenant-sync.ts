import type { ControlPlaneStore } from '@mcpgw/control-plane';
import type { TenantConfig } from '@mcpgw/config';
import type { Logger, ReplicaBus, SourceFactory } from '@mcpgw/core';
import { errorSummary } from '@mcpgw/core';
import { EVERY_TENANT } from './revisions-topic.js';
import type { TenantRegistry } from '../tenant-registry.js';
import type { StoredPlacement, TenantRuntime } from '../tenant-runtime.js';
import { loadServedTenant, runtimeOfStoredTenant } from './stored-tenant-runtime.js';

export interface TenantSyncOptions {
  /** The replica bus revisions arrive on (its owner closes it). */
  readonly bus: ReplicaBus;
  /** The topic of configuration revisions on it (revisionsTopic). */
  readonly topic: string;
  readonly store: ControlPlaneStore;
  readonly registry: TenantRegistry<TenantRuntime>;
  /** The source types: a source is served with the credentials its type declares, no others. */
  readonly sourceFactories: ReadonlyMap<string, SourceFactory>;
  /** Checks a stored tenant by the bootstrap file's rules. */
  readonly validate: (entry: unknown) => Promise<TenantConfig>;
  /** Builds a runtime of a revision; the sources and issuers a tenant admin wrote connect under the egress policy. */
  readonly build: (tenant: TenantConfig, stored: StoredPlacement) => Promise<TenantRuntime>;
  /** Drops the tenant's cached listings and results after its runtime changed. */
  readonly invalidate: (tenantId: string) => Promise<void>;
  /**
   * Told before a revision is built: from then on no runtime of an older
   * revision reads or writes the cache, on this replica or any other
   * (GatewayCache.noteRevision). A failure is logged; the build goes on.
   */
  readonly noteRevision?: (tenantId: string, revision: number) => Promise<void>;
  /**
   * Told when the tenant was deleted (`revision`: the newest this replica
   * had seen): deletes what the cache holds of it, here and in Redis. Called
   * again once the runtimes still finishing requests have closed.
   */
  readonly drop?: (tenantId: string, revision: number | undefined) => Promise<void>;
  /**
   * Told after a runtime was swapped in or removed and its caches were
   * dropped (even if dropping failed): live notifications tell this replica's
   * listeners then, once what they would ask again is served.
   */
  readonly changed?: (tenantId: string) => void;
  readonly logger: Logger;
}

export interface TenantSync {
  /** Reads the tenant from the control plane again and applies it if it changed (a newer revision seen elsewhere). */
  request(tenantId: string): void;
  /**
   * The resync after a gap (docs/adr/0012-one-bus-two-transports.md): compares
   * every tenant's revision with the control plane once and reads those that
   * differ. Run after a gap on the bus, and when a relay of the control
   * plane's own signal asks every replica to (its connection had a gap).
   */
  resync(): void;
  /** Resolves once every refresh requested so far is done (tests, shutdown). */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Keeps this replica's tenant registry equal to the control plane: every
 * tenant at start, then each tenant a revision message on the replica bus
 * names (the control plane's NOTIFY at commit, carried by the bus's
 * transport or relayed onto it), plus a comparison of every revision after
 * a gap on the bus, which catches what a lost message missed (`resync`;
 * docs/adr/0012-one-bus-two-transports.md). A tenant whose new
 * configuration does not validate or cannot be built is no longer served
 * (never by its previous runtime, which holds what the change revoked); a
 * source that fails to open serves as unavailable inside the new runtime.
 * The registry's status says which. A deleted tenant's cache entries go
 * with it, on every replica (each runs this on the same signal).
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

  /** Tenants whose deletion this replica has handled (a later signal for them costs no Redis scan). */
  const dropped = new Set<string>();
  const dropTenant = async (tenantId: string, revision: number | undefined): Promise<void> => {
    if (options.drop === undefined) return;
    dropped.add(tenantId);
    const drop = options.drop;
    await drop(tenantId, revision).catch((error: unknown) =>
      logger.warn({ tenant: tenantId, err: errorSummary(error) }, 'deleting the tenant from the cache failed'),
    );
    // Requests still finishing on the retired runtime may have stored something since: once more after them.
    void registry
      .retiredClosed(tenantId)
      .then(() => drop(tenantId, revision))
      .catch((error: unknown) =>
        logger.warn({ tenant: tenantId, err: errorSummary(error) }, 'deleting the tenant from the cache failed'),
      );
  };

  const refresh = async (tenantId: string): Promise<void> => {
    const loaded = await loadServedTenant(store, tenantId);
    if (loaded === undefined) {
      const status = registry.status(tenantId);
      const deleted = (await store.getTenant(tenantId)) === undefined;
      if (registry.serving.has(tenantId) || status !== undefined) {
        await registry.remove(tenantId);
        if (!deleted) await invalidated(tenantId);
        logger.info({ tenant: tenantId }, 'tenant no longer served (deleted or suspended)');
      }
      if (deleted && !dropped.has(tenantId)) {
        await dropTenant(tenantId, status?.revision);
        options.changed?.(tenantId);
      }
      return;
    }
    dropped.delete(tenantId);
    if (registry.status(tenantId)?.appliedRevision === loaded.revision) return;
    await options
      .noteRevision?.(tenantId, loaded.revision)
      .catch((error: unknown) =>
        logger.warn({ tenant: tenantId, err: errorSummary(error) }, 'recording the new revision in the cache failed'),
      );
    const outcome = await registry.apply(tenantId, () => runtimeOfStoredTenant(loaded, options), loaded.revision);
    if (outcome.ok && outcome.skipped === true) return;
    if (outcome.ok) {
      await invalidated(tenantId);
      logger.info({ tenant: tenantId, revision: loaded.revision }, 'tenant configuration applied');
    } else {
      await invalidated(tenantId);
      logger.error(
        { tenant: tenantId, revision: loaded.revision, err: outcome.error.message },
        'tenant configuration cannot be built: the tenant is not served until it is fixed',
      );
    }
  };

  /** Tenants being read now; `true` once asked again meanwhile (each relay announces a change: one read more, not one per copy). */
  const reading = new Map<string, boolean>();
  const request = (tenantId: string): void => {
    if (stopped) return;
    if (reading.has(tenantId)) {
      reading.set(tenantId, true);
      return;
    }
    reading.set(tenantId, false);
    const work = (async () => {
      do {
        reading.set(tenantId, false);
        await refresh(tenantId).catch((error: unknown) =>
          logger.error(
            { tenant: tenantId, err: errorSummary(error) },
            'reading the tenant from the control plane failed',
          ),
        );
      } while (reading.get(tenantId) === true && !stopped);
      reading.delete(tenantId);
    })();
    pending.add(work);
    void work.finally(() => pending.delete(work));
  };

  const reconcile = async (): Promise<void> => {
    const revisions = await store.revisions();
    for (const [tenantId, revision] of revisions) {
      if (registry.status(tenantId)?.appliedRevision !== revision) request(tenantId);
    }
    for (const tenantId of registry.serving.keys()) if (!revisions.has(tenantId)) request(tenantId);
  };

  const resync = (): void => {
    if (stopped) return;
    reconcile().catch((error: unknown) =>
      logger.warn({ err: errorSummary(error) }, 'control-plane reconciliation failed; retrying'),
    );
  };

  // Subscribed before the first comparison, so a change committed in between is heard or compared.
  const stopListening = options.bus.subscribe(options.topic, (message) =>
    message === EVERY_TENANT ? resync() : request(message),
  );
  const stopGap = options.bus.onGap(resync);
  await reconcile();
  await Promise.all([...pending]);

  return {
    request,
    resync,
    async settled() {
      while (pending.size > 0) await Promise.all([...pending]);
    },
    async stop() {
      stopped = true;
      stopListening();
      stopGap();
      await Promise.all([...pending]);
    },
  };
}

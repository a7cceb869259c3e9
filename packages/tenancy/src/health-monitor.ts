import type { GatewayCache } from '@mcpgw/cache';
import type { Logger } from '@mcpgw/core';
import type { TenantRuntime } from './tenant-runtime.js';

/** How often the background prober looks at every source and the cache. */
export const PROBE_INTERVAL_MS = 30_000;
/** A source that has not answered its health probe by then counts as down. */
export const PROBE_TIMEOUT_MS = 2_000;

/** The shared cache as the last probe round saw it. */
export type CacheReachability = 'in-process' | 'reachable' | 'unreachable';

export interface HealthMonitorOptions {
  tenants: ReadonlyMap<string, TenantRuntime>;
  cache: GatewayCache;
  logger: Logger;
  intervalMs?: number;
  probeTimeoutMs?: number;
}

/**
 * Probes every tenant's sources and the cache in the background, one round
 * at a time, so that neither a `/readyz` request nor anyone who can send one
 * causes backend traffic. A source's health is for operators: it is logged
 * when it changes (a warning when a source goes down, an info line when it
 * is back), with tenant and source ids and the source's own short detail.
 */
export interface HealthMonitor {
  /** The last round's view of the cache; no I/O. */
  readonly cache: CacheReachability;
  /** The last probe of every source of the tenants served now (sources not probed yet are left out); no I/O. */
  sources(): Array<{ tenant: string; source: string; up: boolean }>;
  /** Runs one round now (or joins the one running) and resolves when it settled. */
  probe(): Promise<void>;
  /** Starts the periodic rounds, the first at once. */
  start(): void;
  stop(): void;
}

export function createHealthMonitor(options: HealthMonitorOptions): HealthMonitor {
  const { tenants, cache, logger } = options;
  const intervalMs = options.intervalMs ?? PROBE_INTERVAL_MS;
  const timeoutMs = options.probeTimeoutMs ?? PROBE_TIMEOUT_MS;
  const healthy = new Map<string, boolean>();
  let cacheState: CacheReachability = cache.kind === 'memory' ? 'in-process' : 'unreachable';
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;

  const probeSource = async (tenant: TenantRuntime, source: TenantRuntime['catalog']['sources'][number]) => {
    const health = await source
      .health(AbortSignal.timeout(timeoutMs))
      .catch(() => ({ ok: false, detail: 'the probe failed or timed out' }));
    const key = `${tenant.config.id}\u0000${source.id}`;
    const before = healthy.get(key);
    healthy.set(key, health.ok);
    if (before === health.ok || (before === undefined && health.ok)) return;
    const fields = { tenant: tenant.config.id, source: source.id, detail: health.detail };
    if (health.ok) logger.info(fields, 'source healthy again');
    else logger.warn(fields, 'source unhealthy: its resources are missing from listings and its reads fail');
  };

  const round = async () => {
    await Promise.all([
      ...[...tenants.values()].flatMap((tenant) => tenant.catalog.sources.map((source) => probeSource(tenant, source))),
      cache.kind === 'memory'
        ? undefined
        : cache.ready(timeoutMs).then((ok) => {
            cacheState = ok ? 'reachable' : 'unreachable';
          }),
    ]);
  };

  const probe = () => {
    running ??= round().finally(() => {
      running = undefined;
    });
    return running;
  };

  return {
    get cache() {
      return cacheState;
    },
    probe,
    sources() {
      return [...tenants.values()].flatMap((tenant) =>
        tenant.catalog.sources.flatMap((source) => {
          const up = healthy.get(`${tenant.config.id}\u0000${source.id}`);
          return up === undefined ? [] : [{ tenant: tenant.config.id, source: source.id, up }];
        }),
      );
    },
    start() {
      if (timer !== undefined) return;
      void probe();
      timer = setInterval(() => void probe(), intervalMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}

import Fastify, { LogController } from 'fastify';
import type { FastifyInstance } from 'fastify';
import type { GatewayCache, RedisConnection } from '@mcpgw/cache';
import { createGatewayCache, openRedisConnection } from '@mcpgw/cache';
import type { Logger, SourceFactory } from '@mcpgw/core';
import { createEgressGuard, createServerKeys, errorSummary } from '@mcpgw/core';
import type { GatewayConfig, TenantConfig } from '@mcpgw/config';
import { createCursorCodec, reuseSealedCursors } from '@mcpgw/protocol';
import { stdoutLogDestination } from './observability/log-destination.js';
import { errorHandlerPlugin } from './plugins/error-handler.js';
import type { LimitsOptions } from './plugins/limits.js';
import { installLimits } from './plugins/limits.js';
import { requestGuardPlugin } from './plugins/request-guard.js';
import { requestLogPlugin } from './plugins/request-log.js';
import type {
  ControlPlane,
  HealthMonitor,
  StoredPlacement,
  TenantRegistry,
  TenantRuntime,
  TenantSync,
} from '@mcpgw/tenancy';
import {
  applyBootstrap,
  createBaseUrlResolver,
  createHealthMonitor,
  createPrincipalFingerprint,
  createTenantPrincipalFingerprint,
  createTenantRegistry,
  createTenantRuntime,
  openControlPlane,
  publicBaseUrls,
  startTenantSync,
} from '@mcpgw/tenancy';
import { PROBE_ROUTES, registerHealthRoutes } from './routes/health.js';
import { registerMcpRoutes } from './routes/mcp.js';
import { createSourceRegistry } from './source-registry.js';
import { registerDevAuthorizationServerRoutes } from './routes/dev-authorization-server.js';
import { registerWellKnownRoutes } from './routes/well-known.js';
import { startDevAuthorizationServer } from './dev-authorization-server.js';
import { isLoopbackHost } from '@mcpgw/config';
import type { TracerProvider } from '@opentelemetry/api';
import type { GatewayMetrics } from './observability/gateway-metrics.js';
import { createGatewayMetrics } from './observability/gateway-metrics.js';
import { createRequestTracing } from './observability/request-tracing.js';
import { traceCache } from './observability/traced-cache.js';
import { createRuntimeObservers } from './observability/runtime-observers.js';
import { cacheOperations } from './observability/cache-operations.js';
import { type EventsOption, type TenantEvents, openGatewayEvents } from '@mcpgw/events';
import { installRequestMetrics, METRICS_ROUTE, registerMetricsRoute } from './plugins/metrics.js';
import { installListen } from './notifications/install-listen.js';
import { installAdminApi, type AdminApiOptions } from './admin/install-admin-api.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Both cache layers: `metrics()` per tenant, `invalidateTenant(id)` for source changes and admin writes. */
    cache: GatewayCache;
    /** The tenants this replica serves, each swapped atomically when its configuration changes. */
    tenants: TenantRegistry<TenantRuntime>;
    /** Following the control plane's changes; absent when tenants come from the configuration alone. */
    tenantSync: TenantSync | undefined;
    /** The control-plane store served from; absent when tenants come from the configuration alone. */
    controlPlane: ControlPlane | undefined;
    /** Tenant change events on this replica; live notifications subscribe here (docs/adr/0006-tenant-events.md). */
    events: TenantEvents;
    /** Prometheus metrics (docs/operations.md, "Metric contract"); plugins count rate limiting and shedding here. */
    metrics: GatewayMetrics;
  }
}

/** 2026-07-28 bodies are single JSON-RPC messages; 1 MiB is generous and bounds memory per request. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

export interface BuildAppOptions {
  /** Source factories; defaults to every type this build ships. */
  registry?: ReadonlyMap<string, SourceFactory>;
  /** A pino destination stream, for tests that read the logs. */
  logStream?: NodeJS.WritableStream;
  /**
   * Serve the tenants the control plane holds, following its changes live.
   * `'open-from-env'` opens the store the environment names (DATABASE_URL,
   * else PGlite under DATA_DIR), applies the bootstrap file to it, and closes
   * it with the app; a given ControlPlane stays its owner's. Without one, the
   * gateway serves `config.tenants` as loaded.
   */
  controlPlane?: ControlPlane | 'open-from-env';
  /**
   * Settings of the limits: where refusals are counted (`observe`), and for
   * tests a Redis key namespace and deadline and a shorter event-loop sampling period.
   */
  limits?: Omit<LimitsOptions, 'env' | 'logger'>;
  /** For tests: the result/catalog cache's Redis per-command deadline (default 50 ms, see createGatewayCache). */
  cache?: { commandTimeoutMs?: number };
  /**
   * Where request spans go (main.ts passes the OTLP exporter's provider when
   * OTEL_EXPORTER_OTLP_ENDPOINT is set; tests an in-memory one). Absent: no tracing.
   */
  tracerProvider?: TracerProvider;
  /** Where tenant change events travel (EventsOption); default: Redis pub/sub with REDIS_URL, else in-process. */
  events?: EventsOption;
  /**
   * Serve the admin API (`/admin/v1`, docs/admin-api.md) over the control
   * plane; ignored without one. main.ts turns it on.
   */
  admin?: AdminApiOptions;
}

/**
 * Builds the gateway without listening, so tests can use `app.inject()` or
 * listen on port 0 themselves. Sources are opened here: a broken source fails
 * the build, not the first request.
 */
export async function buildApp(config: GatewayConfig, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    bodyLimit: BODY_LIMIT_BYTES,
    // request.ip is the peer, or with TRUSTED_PROXIES the nearest X-Forwarded-For hop that is not a trusted
    // proxy (read right to left); X-Forwarded-For from anyone else is ignored (docs/operations.md).
    trustProxy: config.env.TRUSTED_PROXIES.length === 0 ? false : [...config.env.TRUSTED_PROXIES],
    // Bounds slow-loris uploads; Fastify's default is no limit.
    requestTimeout: 30_000,
    // Longer than the 60 s idle timeout of common load balancers.
    keepAliveTimeout: 72_000,
    return503OnClosing: true,
    // One access line per request comes from requestLogPlugin instead.
    logController: new LogController({ disableRequestLogging: true }),
    logger: {
      level: config.env.LOG_LEVEL,
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization'],
        censor: '[redacted]',
      },
      stream: options.logStream ?? stdoutLogDestination(),
    },
  });
  const logger = app.log as unknown as Logger;
  // Read at scrape time only, once the build below has filled it in.
  const built: {
    tenants?: TenantRegistry<TenantRuntime>;
    monitor?: HealthMonitor;
    cache?: GatewayCache;
    limits?: Awaited<ReturnType<typeof installLimits>>;
  } = {};
  const isServedTenant = (id: string) => built.tenants?.serving.has(id) === true;
  // Before any plugin, so that rate limiting and shedding can count into it.
  const metrics = createGatewayMetrics({
    cacheOperations: () => cacheOperations(built.cache?.metrics() ?? {}),
    redisCircuitOpen: () => built.cache?.circuitOpen() === true,
    sourcesUp: () => built.monitor?.sources() ?? [],
  });
  app.decorate('metrics', metrics);
  await app.register(requestLogPlugin);
  // First, so that it runs before every route's own hooks, the development server's included.
  await app.register(requestGuardPlugin, {
    bindHost: config.env.HOST,
    publicUrl: config.env.PUBLIC_URL,
    allowedOrigins: config.env.ALLOWED_ORIGINS,
    // Orchestrators probe a pod by its address, not PUBLIC_URL's name (kubelet sends the pod IP as
    // Host; a container HEALTHCHECK asks 127.0.0.1). The probes reveal nothing a rebinding page
    // could use, so they answer whatever the Host. Prometheus scrapes by address too; its token
    // stands in for the Host check.
    unguardedRoutes: [...PROBE_ROUTES, ...(config.env.METRICS_TOKEN === undefined ? [] : [METRICS_ROUTE])],
  });
  const requestMetrics = installRequestMetrics(app, { metrics, isServedTenant });
  const tracing = options.tracerProvider === undefined ? undefined : createRequestTracing(options.tracerProvider);
  tracing?.install(app, { isServedTenant });
  // MCP bodies are JSON only (2026-07-28 transports); anything else is 415.
  app.removeContentTypeParser(['text/plain']);

  const keys = createServerKeys({
    secretsKey: config.env.SECRETS_KEY,
    previousSecretsKey: config.env.SECRETS_KEY_PREVIOUS,
  });
  if (keys.ephemeral) {
    logger.warn(
      {},
      'SECRETS_KEY is unset: cursors and cache keys use a random per-process key, so they do not survive a restart or work across replicas',
    );
  }
  const cursors = reuseSealedCursors(createCursorCodec({ key: keys.cursor }));
  const registry = options.registry ?? createSourceRegistry();
  const [baseUrl, ...aliasBaseUrls] = publicBaseUrls(config.env) as [string, ...string[]];
  const devAuthorizationServer = await startDevAuthorizationServer(config, logger);
  // The process's one Redis connection (a command client and a subscriber), shared by the cache, the rate
  // limits and the replica bus; waited for once (docs/adr/0008-one-replica-bus.md).
  const redisTimeouts = [options.cache?.commandTimeoutMs, options.limits?.redisCommandTimeoutMs].filter(
    (ms) => ms !== undefined,
  );
  const redis: RedisConnection | undefined =
    config.env.REDIS_URL === undefined
      ? undefined
      : openRedisConnection({
          url: config.env.REDIS_URL,
          logger: logger.child({ component: 'redis' }),
          ...(redisTimeouts.length === 0 ? {} : { commandTimeoutMs: Math.max(...redisTimeouts) }),
        });
  if (redis !== undefined && !(await redis.ready(2000))) {
    logger.warn(
      {},
      'Redis does not answer yet: requests are served uncached and rate limits count in process until it does',
    );
  }
  // Redis when REDIS_URL is set, else in-process.
  const cache = createGatewayCache({ redis, key: keys.cacheKey, logger: logger.child({ component: 'cache' }) });
  built.cache = cache;
  // What tenant admins configure connects only where EGRESS_ALLOW lets it (docs/configuration.md, "Egress policy").
  const egress = createEgressGuard({ allow: config.env.EGRESS_ALLOW });
  const runtimeOptions = {
    registry,
    // Lookups traced as child spans of the request, when tracing is on.
    cache: tracing === undefined ? cache : traceCache(cache, tracing),
    cursors,
    logger,
    baseUrl,
    aliasBaseUrls,
    devAuthorizationServer,
    egress,
    observe: createRuntimeObservers(metrics, tracing),
  };
  const build = (tenant: TenantConfig, stored?: StoredPlacement) =>
    createTenantRuntime(tenant, config.configDir, runtimeOptions, stored);
  const tenants = createTenantRegistry<TenantRuntime>((tenantId, error) =>
    logger.warn({ tenant: tenantId, err: errorSummary(error) }, 'closing a retired tenant runtime failed'),
  );
  built.tenants = tenants;
  const live = openGatewayEvents(options.events, { redis, tenants, cache, logger });
  const events = live.events;
  app.decorate('cache', live.cache);
  let tenantSync: TenantSync | undefined;
  let stopWatchingRevisions = (): void => undefined;
  let controlPlane: ControlPlane | undefined;
  try {
    if (options.controlPlane === undefined) {
      for (const tenant of config.tenants) {
        const outcome = await tenants.apply(tenant.id, () => build(tenant));
        if (!outcome.ok) throw outcome.error;
        // Served from the file alone, a source that cannot open is a startup error, as it always was.
        const failed = tenants.serving.get(tenant.id)?.failedSources;
        if (failed !== undefined && failed.size > 0) throw new Error([...failed.values()].join('; '));
      }
    } else {
      controlPlane =
        options.controlPlane === 'open-from-env'
          ? await openControlPlane(config.env, logger.child({ component: 'control-plane' }))
          : options.controlPlane;
      if (options.controlPlane === 'open-from-env') {
        const report = await applyBootstrap(controlPlane.store, config);
        logger.info({ config: config.origin, changes: report.changes }, 'bootstrap applied to the control plane');
      }
      tenantSync = await startTenantSync({
        db: controlPlane.db,
        store: controlPlane.store,
        registry: tenants,
        sourceFactories: registry,
        validate: (entry) => config.validateTenant(entry, 'control plane'),
        build,
        invalidate: (tenantId) => cache.invalidateTenant(tenantId),
        noteRevision: (tenantId, revision) => cache.noteRevision(tenantId, revision),
        drop: async (tenantId, revision) => {
          await cache.dropTenant(tenantId, revision);
          await built.limits?.rateLimits.forgetTenant(tenantId);
        },
        changed: (tenantId) => events.tenantChanged(tenantId),
        logger: logger.child({ component: 'control-plane' }),
      });
      // Another replica started applying a newer revision (the cache's revision floor shows it): apply it here
      // too, even if this replica's own change signal was lost.
      const sync = tenantSync;
      const stopRevisions = cache.onNewerRevision((tenantId) => sync.request(tenantId));
      // The one resync rule: after a gap in the Redis subscription, every tenant is compared with the control plane.
      const stopResync =
        redis?.onResync((gap) => {
          if (gap) sync.resync();
        }) ?? (() => undefined);
      stopWatchingRevisions = () => {
        stopRevisions();
        stopResync();
      };
    }
  } catch (error) {
    await tenantSync?.stop();
    await live.close();
    await tenants.close();
    if (options.controlPlane === 'open-from-env') await controlPlane?.close();
    await cache.close();
    await redis?.close();
    throw error;
  }
  app.decorate('controlPlane', controlPlane);
  app.decorate('tenants', tenants);
  app.decorate('tenantSync', tenantSync);
  app.decorate('events', events);
  const monitor = createHealthMonitor({
    tenants: tenants.serving,
    cache,
    logger: logger.child({ component: 'health' }),
  });
  built.monitor = monitor;
  // Only a listening gateway probes its backends: `app.inject()` tests do not.
  app.addHook('onListen', async () => monitor.start());
  app.addHook('onClose', async () => {
    monitor.stop();
    stopWatchingRevisions();
    await tenantSync?.stop();
    await live.close();
    await tenants.close();
    if (options.controlPlane === 'open-from-env') await controlPlane?.close();
    await cache.close();
    await redis?.close();
    await devAuthorizationServer?.close();
  });
  if (devAuthorizationServer !== undefined) {
    logger.warn(
      { issuer: devAuthorizationServer.issuer },
      'The DEVELOPMENT authorization server is running (demo user, automatic consent). Never expose it: loopback only.',
    );
    registerDevAuthorizationServerRoutes(app, devAuthorizationServer);
  }
  for (const tenant of tenants.serving.values()) {
    if (tenant.config.anonymous) {
      logger.warn(
        { tenant: tenant.config.id },
        `Tenant '${tenant.config.id}' is ANONYMOUS: anyone who can reach this loopback address reads all its resources. Development only.`,
      );
    }
  }
  await app.register(errorHandlerPlugin);
  const limits = await installLimits(app, {
    env: config.env,
    logger: logger.child({ component: 'limits' }),
    observe: metrics,
    redis,
    ...options.limits,
  });
  built.limits = limits;
  registerHealthRoutes(app, monitor);
  registerMetricsRoute(app, {
    metrics,
    token: config.env.METRICS_TOKEN,
    loopbackBind: isLoopbackHost(config.env.HOST),
  });
  const baseUrlOf = createBaseUrlResolver(config.env);
  registerWellKnownRoutes(app, { tenants: tenants.serving, baseUrlOf });
  const listen = installListen(app, {
    env: config.env,
    tenants: tenants.serving,
    bus: events,
    logger: logger.child({ component: 'events' }),
    opened: () => metrics.listenStreamOpened(),
    acknowledged: requestMetrics.listenAcknowledged,
  });
  const principalFingerprint = createPrincipalFingerprint(keys.requestLogFingerprint);
  const tenantFingerprint = createTenantPrincipalFingerprint(keys.tenantPrincipalFingerprint);
  registerMcpRoutes(app, { tenants, baseUrlOf, principalFingerprint, tenantFingerprint, limits, listen });
  if (options.admin !== undefined && controlPlane !== undefined) {
    const context = {
      config,
      controlPlane,
      tenants,
      cache,
      registry,
      devAuthorizationServer,
      egress,
      logger,
      baseUrlOf,
    };
    const baseUrls: [string, ...string[]] = [baseUrl, ...aliasBaseUrls];
    await installAdminApi(app, { ...context, tenantFingerprint, keys, baseUrls }, options.admin);
  } else app.decorate('adminAccess', undefined);
  return app;
}

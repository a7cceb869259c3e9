import Fastify, { LogController } from 'fastify';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { GatewayCache, RateCounter } from '@mcpgw/cache';
import type { SourceFactory } from '@mcpgw/core';
import type { GatewayConfig } from '@mcpgw/config';
import type { TracerProvider } from '@opentelemetry/api';
import type { AdminApiOptions } from './admin/admin-api-plugin.js';
import { adminApiPlugin } from './admin/admin-api-plugin.js';
import type { ControlPlane } from '@mcpgw/tenancy';
import type { EventsOption } from '@mcpgw/events';
import { createGatewayLogger } from './observability/gateway-logger.js';
import { trafficPlugin } from './plugins/traffic.js';
import { accessActivityPlugin } from './plugins/access-activity.js';
import { cachePlugin } from './plugins/cache.js';
import { redisPlugin } from './plugins/redis.js';
import { replicaBusPlugin } from './plugins/replica-bus.js';
import { controlPlaneSyncPlugin } from './plugins/control-plane-sync.js';
import type { AuthorizationServerModules } from './plugins/authorization-server.js';
import { authorizationServerPlugin } from './plugins/authorization-server.js';
import { authorizationServerStorePlugin } from './plugins/authorization-server-store.js';
import { errorHandlerPlugin } from './plugins/error-handler.js';
import { eventsPlugin } from './plugins/events.js';
import { gatewaySettingsPlugin } from './plugins/gateway-settings.js';
import { limitsPlugin } from './plugins/limits.js';
import { listenPlugin } from './plugins/listen.js';
import { METRICS_ROUTE, metricsPlugin, requestObservationPlugin } from './plugins/metrics.js';
import { requestGuardPlugin } from './plugins/request-guard.js';
import { requestLogPlugin } from './plugins/request-log.js';
import { tenantsPlugin } from './plugins/tenants.js';
import { tracingPlugin } from './plugins/tracing.js';
import { healthPlugin, PROBE_ROUTES } from './routes/health.js';
import { authorizationServerRoutesPlugin } from './routes/authorization-server.js';
import { mcpRoutesPlugin } from './routes/mcp.js';
import { wellKnownPlugin } from './routes/well-known.js';

/** 2026-07-28 bodies are single JSON-RPC messages; 1 MiB is generous and bounds memory per request. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * The parts the gateway is assembled from. Only the control plane is
 * required; each other part defaults to what the environment names. A part
 * given here stays its caller's: close it after the app.
 */
export interface BuildAppOptions {
  /**
   * The control-plane store the tenants are served from, migrated, with the
   * bootstrap file applied (openServingControlPlane, as main.ts opens it).
   */
  controlPlane: ControlPlane;
  /**
   * Source factories; defaults to every type this build ships, with S3 caller
   * identity signing with the tenants' own keys (plugins/gateway-settings.ts).
   * A registry given here brings its own ports.
   */
  registry?: ReadonlyMap<string, SourceFactory>;
  /** A pino destination stream; default: standard output, a synchronous write per line (observability/gateway-logger.ts). */
  logStream?: NodeJS.WritableStream;
  /** Where request spans go (main.ts passes the OTLP exporter's provider when OTEL_EXPORTER_OTLP_ENDPOINT is set). Absent: no tracing. */
  tracerProvider?: TracerProvider;
  /** Where tenant change events travel (EventsOption); default: Redis pub/sub with REDIS_URL, else in-process. */
  events?: EventsOption;
  /** The result and catalog cache; default: Redis at REDIS_URL, else in-process (createGatewayCache). */
  cache?: GatewayCache;
  /** The rate-limit counters every replica shares; default: Redis at REDIS_URL, else in-process only. */
  rateCounter?: RateCounter;
  /** Serve the admin API (`/admin/v1`, docs/admin-api.md). main.ts turns it on. */
  admin?: AdminApiOptions;
  /** What tests change of the modules tenants' hosted authorization servers are composed of (AuthorizationServerModules). */
  authorizationServer?: AuthorizationServerModules;
}

/**
 * Builds the gateway without listening, so tests can use `app.inject()` or
 * listen on port 0 themselves. Each subsystem is a plugin that decorates
 * what it owns (declared beside it) and closes it with the app; a plugin
 * names the ones it reads in its `dependencies`, so the order below is
 * checked. Tenants are built from the control plane before this resolves.
 */
export async function buildApp(config: GatewayConfig, options: BuildAppOptions): Promise<FastifyInstance> {
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
    loggerInstance: createGatewayLogger(config.env, options.logStream) as FastifyBaseLogger,
  });
  // MCP bodies are JSON only (2026-07-28 transports); anything else is 415.
  app.removeContentTypeParser(['text/plain']);
  try {
    await app.register(requestLogPlugin);
    // Before every route's own hooks, the authorization servers' included.
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
    await app.register(gatewaySettingsPlugin, { config, sourceFactories: options.registry });
    await app.register(metricsPlugin);
    await app.register(tracingPlugin, { tracerProvider: options.tracerProvider });
    await app.register(redisPlugin);
    await app.register(authorizationServerStorePlugin, { controlPlane: options.controlPlane });
    await app.register(authorizationServerPlugin, {
      modules: options.authorizationServer,
      audit: options.controlPlane.store,
    });
    await app.register(replicaBusPlugin, { controlPlane: options.controlPlane });
    await app.register(cachePlugin, { cache: options.cache });
    await app.register(trafficPlugin);
    await app.register(accessActivityPlugin);
    await app.register(tenantsPlugin);
    await app.register(requestObservationPlugin);
    await app.register(eventsPlugin, { events: options.events });
    await app.register(errorHandlerPlugin);
    await app.register(limitsPlugin, { rateCounter: options.rateCounter });
    await app.register(controlPlaneSyncPlugin, { controlPlane: options.controlPlane });
    await app.register(healthPlugin);
    await app.register(wellKnownPlugin);
    await app.register(authorizationServerRoutesPlugin);
    await app.register(listenPlugin);
    await app.register(mcpRoutesPlugin);
    await app.register(adminApiPlugin, {
      admin:
        options.admin === undefined
          ? undefined
          : { authorizationRecords: app.authorizationServerStorage.records, ...options.admin },
    });
  } catch (error) {
    // What was opened before the failure closes with the plugins that opened it.
    await app.close().catch(() => undefined);
    throw error;
  }
  return app;
}

// First: holds the notices dependencies print as they load, until the logger exists.
import { logLibraryNotices } from './library-notices.js';
import { ConfigError, loadConfig, silencePinnedDependencyNotices } from '@mcpgw/config';
import type { FastifyInstance } from 'fastify';
import type { Logger, SourceFactory } from '@mcpgw/core';
import { buildApp } from './app.js';
import { applyBootstrap, listenFailure, publicBaseUrl, StartupFailure, tenantResourceUri } from '@mcpgw/tenancy';
import { demoBootstrap } from './demo.js';
import { tokenTarget } from './local-issuers.js';
import { createGatewayLogger } from './observability/gateway-logger.js';
import { startOtlpTracing } from './observability/otlp-tracing.js';
import { routeProcessWarnings } from './process-warnings.js';
import { recordRunningGateway } from './running-gateway.js';
import { openServingControlPlane } from './serving-control-plane.js';
import { createSourceRegistry } from './source-registry.js';

/**
 * Milliseconds from the process's start (performance.timeOrigin) to the end of each phase of the
 * start, logged with `gateway listening`: what starting costs, phase by phase (docs/performance.md,
 * "Start"). Read here, after every static import has been evaluated: `modules` is Node's own
 * start plus loading the gateway's import graph.
 */
const startMs: Record<string, number> = { modules: Math.round(performance.now()) };
const mark = (phase: string) => (startMs[phase] = Math.round(performance.now()));

/** Whether LOG_LEVEL asks for detail: a start that fails unexpectedly then prints its stack. */
let verbose = false;

/** Process entry: load config → build → handle signals → listen. */
async function main(): Promise<void> {
  silencePinnedDependencyNotices();
  const warnings = routeProcessWarnings();
  // Validates the bootstrap file's sources. The app makes its own, whose S3 sources sign callers'
  // identity tokens with the keys of the tenants' hosted authorization servers (plugins/gateway-settings.ts).
  const registry = createSourceRegistry();
  const config = await loadConfig({ registry, defaultBootstrap: demoBootstrap() });
  mark('config');
  verbose = config.env.LOG_LEVEL === 'debug' || config.env.LOG_LEVEL === 'trace';
  // OpenTelemetry traces, when OTEL_EXPORTER_OTLP_ENDPOINT is set; flushed after the last request.
  const tracing = await startOtlpTracing(config.env);
  const controlPlane = await openServingControlPlane(config, createGatewayLogger(config.env) as unknown as Logger);
  mark('controlPlane');
  const app = await buildApp(config, {
    controlPlane,
    admin: {},
    ...(tracing === undefined ? {} : { tracerProvider: tracing.provider }),
  }).catch(async (error: unknown) => {
    await controlPlane.close().catch(() => undefined);
    throw error;
  });
  mark('app');
  if (tracing !== undefined) app.addHook('onClose', () => tracing.shutdown());
  // The control plane was opened before the app, so it closes after it.
  const close = () => app.close().then(() => controlPlane.close());
  warnings.logTo(app.log);
  logLibraryNotices(app.log as unknown as Logger);
  // Signals are handled from before the gateway listens: a SIGHUP or SIGTERM that arrives as
  // the start line is printed must find its handler, not Node's default (exit without a word).
  let forgetRecord: (() => Promise<void>) | undefined;
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) {
      app.log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    closing = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    Promise.all([close(), forgetRecord?.()]).then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  // Node's default for SIGHUP is to exit without a word. Here it re-reads the bootstrap file and
  // applies what changed to the control plane; every replica then follows, this one included.
  let reloading = false;
  process.on('SIGHUP', () => {
    if (reloading) return app.log.warn({ signal: 'SIGHUP' }, 'SIGHUP ignored: a reload is already running');
    reloading = true;
    app.log.info({ signal: 'SIGHUP' }, 'reloading the bootstrap file');
    reloadBootstrap(app, registry)
      .catch((error: unknown) =>
        app.log.error(
          { err: error instanceof ConfigError ? error.message : String(error) },
          'reload refused: the bootstrap file has problems; nothing was changed',
        ),
      )
      .finally(() => (reloading = false));
  });

  await app.listen({ host: config.env.HOST, port: config.env.PORT }).catch(async (error: unknown) => {
    const failure = listenFailure(error, config.env.HOST, config.env.PORT);
    if (failure === undefined) throw error;
    await close().catch(() => undefined);
    throw failure;
  });

  mark('listen');
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.env.PORT;
  const base = publicBaseUrl(config.env, port);
  // For `npm run token`: which gateway runs from this DATA_DIR, and what its loopback issuers sign for.
  const target = tokenTarget(config);
  if (target !== undefined) {
    forgetRecord = await recordRunningGateway(config, { ...target, url: base, config: config.origin });
  }
  app.log.info(
    { config: config.origin, endpoints: config.tenants.map((t) => tenantResourceUri(base, t.id)), startMs },
    'gateway listening',
  );
}

/**
 * Re-reads the bootstrap file and writes what differs to the control plane.
 * The environment is not re-read: keys such as PORT or REDIS_URL take a restart.
 */
async function reloadBootstrap(app: FastifyInstance, registry: ReadonlyMap<string, SourceFactory>): Promise<void> {
  const config = await loadConfig({ registry, defaultBootstrap: demoBootstrap() });
  const report = await applyBootstrap(app.controlPlane.store, config);
  app.log.info({ config: config.origin, changes: report.changes }, 'bootstrap file reloaded');
}

main().catch((error: unknown) => {
  // Configuration problems and failures with a setting to change are the operator's to fix: print
  // them plainly, one line each. Anything else is one line too; its stack only at debug or trace.
  const text =
    error instanceof ConfigError || error instanceof StartupFailure
      ? error.message
      : `Gateway failed to start: ${error instanceof Error ? error.message : String(error)}` +
        (verbose && error instanceof Error && error.stack !== undefined ? `\n${error.stack}` : '');
  process.stderr.write(`${text}\n`);
  process.exit(1);
});

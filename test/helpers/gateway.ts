import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createGatewayCache } from '@mcpgw/cache';
import type { Logger, SourceFactory } from '@mcpgw/core';
import { createServerKeys } from '@mcpgw/core';
import { loadConfig, type GatewayConfig } from '@mcpgw/config';
import {
  buildApp,
  createGatewayLogger,
  createSourceRegistry,
  demoBootstrap,
  openServingControlPlane,
  type BuildAppOptions,
} from '@mcpgw/gateway/testing';
import { createControlPlaneDatabase } from './control-plane-database.js';
import { freePort } from './free-port.js';

/**
 * Load shedding switched off (both thresholds 0), for gateways a test starts
 * to exercise something else. Shedding judges the event loop, and on a loaded
 * test machine the loop is late for reasons that have nothing to do with the
 * gateway: a 503 there would fail a test about, say, source errors. The
 * production defaults are untouched; the shedding tests set their own
 * thresholds (an explicit env wins over this).
 */
export const NO_SHEDDING_ENV: Readonly<Record<string, string>> = {
  SHED_EVENT_LOOP_DELAY_MS: '0',
  SHED_EVENT_LOOP_UTILIZATION: '0',
};

/**
 * The test app's Redis cache deadline, instead of the 50 ms default: on a busy
 * test machine a late event loop runs that timer before it reads a live Redis's
 * reply, and the lookup becomes a miss that a test counting hits would see.
 * With REDIS_URL the test app is given a cache made with it (BuildAppOptions.cache).
 */
export const TEST_CACHE_COMMAND_TIMEOUT_MS = 1000;

export interface TestAppOptions {
  /** The bootstrap document used when env has no GATEWAY_CONFIG; omitted: the built-in demo tenant. */
  bootstrap?: { document: unknown; configDir: string };
  /**
   * Extra environment, merged over silent logs (info with a logStream), a
   * temporary DATA_DIR, an empty control-plane database of its own
   * (DATABASE_URL, see control-plane-database.ts) and load shedding off (NO_SHEDDING_ENV):
   * a test about shedding sets SHED_* here, replicas of one deployment the
   * DATABASE_URL they share.
   */
  env?: Record<string, string>;
  /** Where the app writes its JSON log lines. */
  logStream?: NodeJS.WritableStream;
  /** Source factories; default: every type this build ships, as the app wires them. */
  registry?: ReadonlyMap<string, SourceFactory>;
  /** Where tenant events travel (see BuildAppOptions); replicas of one test share a namespace or pass their own buses. */
  events?: BuildAppOptions['events'];
  /** Serve the admin API (see BuildAppOptions). */
  admin?: BuildAppOptions['admin'];
  /** The shared rate-limit counters (see BuildAppOptions), e.g. under a test's own Redis namespace; the test closes them. */
  rateCounter?: BuildAppOptions['rateCounter'];
  /** Where request spans go (see BuildAppOptions). */
  tracerProvider?: BuildAppOptions['tracerProvider'];
  /** What a test changes of the hosted authorization servers' modules (a metadata document server's certificate). */
  authorizationServer?: BuildAppOptions['authorizationServer'];
}

export interface TestApp {
  app: FastifyInstance;
  config: GatewayConfig;
  /** Closes the app and removes the temporary DATA_DIR. */
  close(): Promise<void>;
}

/**
 * The one test app builder: loads configuration, opens the control plane and
 * applies the bootstrap file to it the way `npm start` does, and builds the
 * app without listening, for `app.inject()` or a listen of the test's own.
 * Every test gets its own DATA_DIR and, unless its env names one, its own
 * control-plane database, so no two share a store.
 */
export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const registry = options.registry ?? createSourceRegistry();
  const closers: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const closer of closers.splice(0).reverse()) await closer();
  };
  try {
    const dataDir = await mkdtemp(join(tmpdir(), 'gw-data-'));
    closers.push(() => rm(dataDir, { recursive: true, force: true }));
    const database = options.env?.DATABASE_URL === undefined ? await createControlPlaneDatabase() : undefined;
    if (database !== undefined) closers.push(() => database.release());
    const config = await loadConfig({
      registry,
      defaultBootstrap: options.bootstrap ?? demoBootstrap(),
      env: {
        LOG_LEVEL: options.logStream === undefined ? 'silent' : 'info',
        DATA_DIR: dataDir,
        ...(database === undefined ? {} : { DATABASE_URL: database.url }),
        ...NO_SHEDDING_ENV,
        ...options.env,
      },
    });
    const logger = createGatewayLogger(config.env, options.logStream) as unknown as Logger;
    const controlPlane = await openServingControlPlane(config, logger);
    closers.push(() => controlPlane.close());
    const { SECRETS_KEY, SECRETS_KEY_PREVIOUS, REDIS_URL } = config.env;
    // Without Redis the app makes its own in-process cache, on its replica bus (Postgres NOTIFY between replicas).
    const cache =
      REDIS_URL === undefined
        ? undefined
        : createGatewayCache({
            redisUrl: REDIS_URL,
            // As the app keys its own: replicas with one SECRETS_KEY share entries.
            key: createServerKeys({ secretsKey: SECRETS_KEY, previousSecretsKey: SECRETS_KEY_PREVIOUS }).cacheKey,
            logger: logger.child({ component: 'cache' }),
            commandTimeoutMs: TEST_CACHE_COMMAND_TIMEOUT_MS,
          });
    if (cache !== undefined) closers.push(() => cache.close());
    const app = await buildApp(config, {
      // Without a registry of the test's, the app's own: its S3 sources sign callers' identity tokens.
      ...(options.registry === undefined ? {} : { registry: options.registry }),
      controlPlane,
      ...(cache === undefined ? {} : { cache }),
      ...(options.logStream === undefined ? {} : { logStream: options.logStream }),
      ...(options.events === undefined ? {} : { events: options.events }),
      ...(options.admin === undefined ? {} : { admin: options.admin }),
      ...(options.rateCounter === undefined ? {} : { rateCounter: options.rateCounter }),
      ...(options.tracerProvider === undefined ? {} : { tracerProvider: options.tracerProvider }),
      ...(options.authorizationServer === undefined ? {} : { authorizationServer: options.authorizationServer }),
    });
    closers.push(() => app.close());
    return { app, config, close };
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
}

export interface StartedGateway extends TestApp {
  /** e.g. http://127.0.0.1:41234 */
  baseUrl: string;
}

export interface StartGatewayOptions extends TestAppOptions {
  /** A bootstrap file; omitted: `bootstrap`, else the built-in demo tenant. */
  configPath?: string;
}

/**
 * Builds the test app (buildTestApp) and listens on a free loopback port. The
 * port is chosen before the build because tokens are bound to the tenant's
 * URL, which includes it.
 */
export async function startGateway(options: StartGatewayOptions = {}): Promise<StartedGateway> {
  const port = await freePort();
  const built = await buildTestApp({
    ...options,
    env: {
      HOST: '127.0.0.1',
      PORT: String(port),
      ...(options.configPath === undefined ? {} : { GATEWAY_CONFIG: options.configPath }),
      ...options.env,
    },
  });
  await built.app.listen({ host: built.config.env.HOST, port: built.config.env.PORT });
  return { ...built, baseUrl: `http://127.0.0.1:${built.config.env.PORT}` };
}

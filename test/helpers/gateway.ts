import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { SourceFactory } from '@mcpgw/core';
import { loadConfig, type GatewayConfig } from '@mcpgw/config';
import { buildApp, createSourceRegistry, demoBootstrap, type BuildAppOptions } from '@mcpgw/gateway/testing';
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
 */
export const TEST_CACHE_COMMAND_TIMEOUT_MS = 1000;

export interface TestAppOptions {
  /** The bootstrap document used when env has no GATEWAY_CONFIG; omitted: the built-in demo tenant. */
  bootstrap?: { document: unknown; configDir: string };
  /**
   * Extra environment, merged over silent logs (info with a logStream), a
   * temporary DATA_DIR and load shedding off (NO_SHEDDING_ENV): a test about
   * shedding sets SHED_* here.
   */
  env?: Record<string, string>;
  /** Where the app writes its JSON log lines. */
  logStream?: NodeJS.WritableStream;
  /** Source factories; default: every type this build ships. */
  registry?: ReadonlyMap<string, SourceFactory>;
  /** Serve the tenants a control plane holds (see BuildAppOptions). */
  controlPlane?: BuildAppOptions['controlPlane'];
  /** Where tenant events travel (see BuildAppOptions); replicas of one test share a namespace or pass their own buses. */
  events?: BuildAppOptions['events'];
  /** Serve the admin API (see BuildAppOptions). */
  admin?: BuildAppOptions['admin'];
}

export interface TestApp {
  app: FastifyInstance;
  config: GatewayConfig;
  /** Closes the app and removes the temporary DATA_DIR. */
  close(): Promise<void>;
}

/**
 * The one test app builder: loads configuration the way `npm start` does and
 * builds the app without listening, for `app.inject()` or a listen of the
 * test's own. Every test gets its own DATA_DIR, so no two share a store.
 */
export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const registry = options.registry ?? createSourceRegistry();
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-data-'));
  const config = await loadConfig({
    registry,
    defaultBootstrap: options.bootstrap ?? demoBootstrap(),
    env: {
      LOG_LEVEL: options.logStream === undefined ? 'silent' : 'info',
      DATA_DIR: dataDir,
      ...NO_SHEDDING_ENV,
      ...options.env,
    },
  });
  const app = await buildApp(config, {
    registry,
    cache: { commandTimeoutMs: TEST_CACHE_COMMAND_TIMEOUT_MS },
    ...(options.logStream === undefined ? {} : { logStream: options.logStream }),
    ...(options.controlPlane === undefined ? {} : { controlPlane: options.controlPlane }),
    ...(options.events === undefined ? {} : { events: options.events }),
    ...(options.admin === undefined ? {} : { admin: options.admin }),
  });
  const close = async () => {
    await app.close();
    await rm(dataDir, { recursive: true, force: true });
  };
  return { app, config, close };
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

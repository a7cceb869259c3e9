/**
 * Starts the gateway from its build (apps/gateway/dist), as `npm start` runs
 * it, for benchmarks: they run on Node 22's type stripping, where
 * `@mcpgw/gateway/testing` resolves to the built JavaScript (its "default"
 * export condition); tsc types it from the sources (`@mcpgw/source`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@mcpgw/config';
import type { Logger } from '@mcpgw/core';
import {
  buildApp,
  createGatewayLogger,
  createSourceRegistry,
  demoBootstrap,
  openServingControlPlane,
  type BuildAppOptions,
} from '@mcpgw/gateway/testing';
import type { FastifyInstance } from 'fastify';

export interface BuiltGateway {
  app: FastifyInstance;
  port: number;
  /** Closes the app, then its control plane (and removes a DATA_DIR made for it). */
  close(): Promise<void>;
}

/**
 * Loads configuration from `env` (GATEWAY_CONFIG, ...), opens the control
 * plane it names as main.ts does (DATABASE_URL, else PGlite under DATA_DIR,
 * a temporary one unless `env` names it), applies the bootstrap file, and
 * listens on HOST (loopback unless `env` names another) and PORT (a free one unless `env` names one); `registry` defaults to every source type.
 */
export async function startBuiltGateway(
  env: Record<string, string>,
  options: Omit<BuildAppOptions, 'controlPlane'> = {},
): Promise<BuiltGateway> {
  const registry = options.registry ?? createSourceRegistry();
  const dataDir =
    env.DATABASE_URL === undefined && env.DATA_DIR === undefined
      ? await mkdtemp(join(tmpdir(), 'gw-bench-'))
      : undefined;
  const config = await loadConfig({
    registry,
    defaultBootstrap: demoBootstrap(),
    env: { PORT: '0', LOG_LEVEL: 'silent', ...(dataDir === undefined ? {} : { DATA_DIR: dataDir }), ...env },
  });
  const controlPlane = await openServingControlPlane(
    config,
    createGatewayLogger(config.env, options.logStream) as unknown as Logger,
  );
  const app = await buildApp(config, { ...options, registry, controlPlane });
  await app.listen({ host: config.env.HOST, port: config.env.PORT });
  const address = app.server.address();
  return {
    app,
    port: typeof address === 'object' && address !== null ? address.port : 0,
    async close() {
      await app.close();
      await controlPlane.close();
      if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

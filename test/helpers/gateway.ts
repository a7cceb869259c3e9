import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { SourceFactory } from '@mcpgw/core';
import { loadConfig, type GatewayConfig } from '@mcpgw/config';
import { buildApp, createSourceRegistry, demoBootstrap } from '@mcpgw/gateway/testing';
import { freePort } from './free-port.js';

export interface StartedGateway {
  /** e.g. http://127.0.0.1:41234 */
  baseUrl: string;
  app: FastifyInstance;
  config: GatewayConfig;
  close(): Promise<void>;
}

export interface StartGatewayOptions {
  /** A bootstrap file; omitted: the built-in demo tenant. */
  configPath?: string;
  /** Extra environment (merged over loopback, a free port, silent logs, a temp DATA_DIR). */
  env?: Record<string, string>;
  logStream?: NodeJS.WritableStream;
  /** Source factories; default: every type this build ships. */
  registry?: ReadonlyMap<string, SourceFactory>;
}

/**
 * Loads configuration the way `npm start` does and listens on a free loopback
 * port. The port is chosen before the build because tokens are bound to the
 * tenant's URL, which includes it.
 */
export async function startGateway(options: StartGatewayOptions = {}): Promise<StartedGateway> {
  const registry = options.registry ?? createSourceRegistry();
  const port = await freePort();
  const config = await loadConfig({
    registry,
    defaultBootstrap: demoBootstrap(),
    env: {
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: options.logStream === undefined ? 'silent' : 'info',
      DATA_DIR: await mkdtemp(join(tmpdir(), 'gw-data-')),
      ...(options.configPath === undefined ? {} : { GATEWAY_CONFIG: options.configPath }),
      ...options.env,
    },
  });
  const app = await buildApp(config, { registry, ...(options.logStream ? { logStream: options.logStream } : {}) });
  await app.listen({ host: config.env.HOST, port: config.env.PORT });
  return { baseUrl: `http://127.0.0.1:${config.env.PORT}`, app, config, close: () => app.close() };
}

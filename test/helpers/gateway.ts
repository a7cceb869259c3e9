import type { FastifyInstance } from 'fastify';
import { loadConfig } from '@mcpgw/config';
import type { GatewayConfig } from '@mcpgw/config';
import { buildApp } from '../../apps/gateway/src/app.js';
import { demoBootstrap } from '../../apps/gateway/src/demo.js';
import { createSourceRegistry } from '../../apps/gateway/src/source-registry.js';

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
  /** Extra environment (merged over loopback, port 0, silent logs). */
  env?: Record<string, string>;
  logStream?: NodeJS.WritableStream;
}

/** Loads configuration the way `npm start` does and listens on a free loopback port. */
export async function startGateway(options: StartGatewayOptions = {}): Promise<StartedGateway> {
  const registry = createSourceRegistry();
  const config = await loadConfig({
    registry,
    defaultBootstrap: demoBootstrap(),
    env: {
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: options.logStream === undefined ? 'silent' : 'info',
      ...(options.configPath === undefined ? {} : { GATEWAY_CONFIG: options.configPath }),
      ...options.env,
    },
  });
  const app = await buildApp(config, { registry, ...(options.logStream ? { logStream: options.logStream } : {}) });
  await app.listen({ host: config.env.HOST, port: 0 });
  const address = app.server.address();
  if (typeof address !== 'object' || address === null) throw new Error('gateway did not bind a TCP port');
  return { baseUrl: `http://127.0.0.1:${address.port}`, app, config, close: () => app.close() };
}

/**
 * Starts the gateway from its build (apps/gateway/dist), as `npm start` runs
 * it, for benchmarks: they run on Node 22's type stripping, where
 * `@mcpgw/gateway/testing` resolves to the built JavaScript (its "default"
 * export condition); tsc types it from the sources (`@mcpgw/source`).
 */
import { loadConfig } from '@mcpgw/config';
import { buildApp, createSourceRegistry, demoBootstrap, type BuildAppOptions } from '@mcpgw/gateway/testing';
import type { FastifyInstance } from 'fastify';

export interface BuiltGateway {
  app: FastifyInstance;
  port: number;
}

/** Loads configuration from `env` (GATEWAY_CONFIG, ...) and listens on a free loopback port; `registry` defaults to every source type. */
export async function startBuiltGateway(
  env: Record<string, string>,
  options: BuildAppOptions = {},
): Promise<BuiltGateway> {
  const registry = options.registry ?? createSourceRegistry();
  const config = await loadConfig({
    registry,
    defaultBootstrap: demoBootstrap(),
    env: { PORT: '0', LOG_LEVEL: 'silent', ...env },
  });
  const app = await buildApp(config, { ...options, registry });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  return { app, port: typeof address === 'object' && address !== null ? address.port : 0 };
}

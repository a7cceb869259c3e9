/**
 * Starts the gateway from its build (apps/gateway/dist), as `npm start` runs
 * it, for benchmarks: they run on Node 22's type stripping, which loads the
 * built JavaScript and cannot resolve the sources' `.js` imports. The modules
 * are typed from their sources.
 */
import { loadConfig } from '@mcpgw/config';
import type { FastifyInstance } from 'fastify';
import type * as AppModule from '../../apps/gateway/src/app.js';
import type * as DemoModule from '../../apps/gateway/src/demo.js';
import type * as RegistryModule from '../../apps/gateway/src/source-registry.js';

const built = (path: string) => new URL(`../../apps/gateway/dist/${path}`, import.meta.url).href;
const { buildApp } = (await import(built('app.js'))) as typeof AppModule;
const { createSourceRegistry } = (await import(built('source-registry.js'))) as typeof RegistryModule;
const { demoBootstrap } = (await import(built('demo.js'))) as typeof DemoModule;

export interface BuiltGateway {
  app: FastifyInstance;
  port: number;
}

/** Loads configuration from `env` (GATEWAY_CONFIG, ...) and listens on a free loopback port. */
export async function startBuiltGateway(env: Record<string, string>): Promise<BuiltGateway> {
  const registry = createSourceRegistry();
  const config = await loadConfig({
    registry,
    defaultBootstrap: demoBootstrap(),
    env: { PORT: '0', LOG_LEVEL: 'silent', ...env },
  });
  const app = await buildApp(config, { registry });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  return { app, port: typeof address === 'object' && address !== null ? address.port : 0 };
}

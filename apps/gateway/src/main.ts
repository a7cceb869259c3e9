import { ConfigError, loadConfig } from '@mcpgw/config';
import { buildApp } from './app.js';
import { demoBootstrap } from './demo.js';
import { createSourceRegistry } from './source-registry.js';

/** Process entry: load config → build → listen → handle signals. */
async function main(): Promise<void> {
  const registry = createSourceRegistry();
  const config = await loadConfig({ registry, defaultBootstrap: demoBootstrap() });
  const app = await buildApp(config, { registry });
  await app.listen({ host: config.env.HOST, port: config.env.PORT });

  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.env.PORT;
  const host = config.env.HOST.includes(':') ? `[${config.env.HOST}]` : config.env.HOST;
  const base = config.env.PUBLIC_URL ?? `http://${host}:${port}`;
  app.log.info(
    { config: config.origin, endpoints: config.tenants.map((t) => `${base}/t/${t.id}/mcp`) },
    'gateway listening',
  );

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) {
      app.log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    closing = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  // Node's default for SIGHUP is to exit without a word (a closed terminal, or an operator
  // expecting a reload). Neither should stop a gateway silently: say what happens instead.
  process.on('SIGHUP', () =>
    app.log.warn(
      { signal: 'SIGHUP' },
      'SIGHUP ignored: reloading the configuration is not supported yet; restart the gateway to apply changes',
    ),
  );
}

main().catch((error: unknown) => {
  // Configuration problems are the operator's to fix: print them plainly.
  process.stderr.write(
    error instanceof ConfigError
      ? `${error.message}\n`
      : `Gateway failed to start: ${String((error as Error)?.stack ?? error)}\n`,
  );
  process.exit(1);
});

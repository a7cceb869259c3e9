import { randomBytes } from 'node:crypto';
import Fastify, { LogController } from 'fastify';
import type { FastifyInstance } from 'fastify';
import type { Logger, SourceFactory } from '@mcpgw/core';
import type { GatewayConfig } from '@mcpgw/config';
import { createCursorCodec } from '@mcpgw/protocol';
import { installErrorHandler } from './plugins/error-handler.js';
import { createRequestGuard } from './plugins/request-guard.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerMcpRoutes } from './routes/mcp.js';
import { createSourceRegistry } from './source-registry.js';
import { closeTenantRuntimes, createTenantRuntimes } from './tenant-runtime.js';

/** 2026-07-28 bodies are single JSON-RPC messages; 1 MiB is generous and bounds memory per request. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

export interface BuildAppOptions {
  /** Source factories; defaults to every type this build ships. */
  registry?: ReadonlyMap<string, SourceFactory>;
  /** A pino destination stream, for tests that read the logs. */
  logStream?: NodeJS.WritableStream;
}

/**
 * Builds the gateway without listening, so tests can use `app.inject()` or
 * listen on port 0 themselves. Sources are opened here: a broken source fails
 * the build, not the first request.
 */
export async function buildApp(config: GatewayConfig, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    bodyLimit: BODY_LIMIT_BYTES,
    // Bounds slow-loris uploads; Fastify's default is no limit.
    requestTimeout: 30_000,
    // Longer than the 60 s idle timeout of common load balancers.
    keepAliveTimeout: 72_000,
    return503OnClosing: true,
    // One access line per request comes from our onResponse hook instead.
    logController: new LogController({ disableRequestLogging: true }),
    logger: {
      level: config.env.LOG_LEVEL,
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization'],
        censor: '[redacted]',
      },
      ...(options.logStream === undefined ? {} : { stream: options.logStream }),
    },
  });
  const logger = app.log as unknown as Logger;
  // MCP bodies are JSON only (2026-07-28 transports); anything else is 415.
  app.removeContentTypeParser(['text/plain']);

  const secret = config.env.SECRETS_KEY === undefined ? randomBytes(32) : Buffer.from(config.env.SECRETS_KEY, 'utf8');
  if (config.env.SECRETS_KEY === undefined) {
    logger.warn(
      {},
      'SECRETS_KEY is unset: cursors are signed with a random per-process key, so they do not survive a restart or work across replicas',
    );
  }
  const cursors = createCursorCodec({ secret });
  const registry = options.registry ?? createSourceRegistry();
  const tenants = await createTenantRuntimes(config, registry, cursors, logger);
  app.addHook('onClose', async () => closeTenantRuntimes(tenants));

  for (const tenant of tenants.values()) {
    if (tenant.config.anonymous) {
      logger.warn(
        { tenant: tenant.config.id },
        `Tenant '${tenant.config.id}' is ANONYMOUS: anyone who can reach this loopback address reads all its resources. Development only.`,
      );
    }
  }

  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        method: request.method,
        url: request.url,
        status: reply.statusCode,
        mcpMethod: request.headers['mcp-method'],
        ms: Math.round(reply.elapsedTime),
      },
      'request',
    );
  });

  installErrorHandler(app);
  registerHealthRoutes(app, tenants);
  registerMcpRoutes(app, {
    tenants,
    guard: createRequestGuard({
      bindHost: config.env.HOST,
      publicUrl: config.env.PUBLIC_URL,
      allowedOrigins: config.env.ALLOWED_ORIGINS,
    }),
  });
  return app;
}

import type { DevAuthorizationServer } from '@mcpgw/dev-authorization-server';
import fastifyPlugin from 'fastify-plugin';
import { startDevAuthorizationServer } from '../dev-authorization-server.js';
import { registerDevAuthorizationServerRoutes } from '../routes/dev-authorization-server.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The built-in development authorization server; null unless a tenant trusts it (loopback only). */
    devAuthorizationServer: DevAuthorizationServer | null;
  }
}

/**
 * Starts the development authorization server when a tenant of the
 * configuration trusts it, mounts it on the gateway's port, and stops it
 * with the app.
 */
export const devAuthorizationServerPlugin = fastifyPlugin(
  async (app) => {
    const { config, logger } = app.settings;
    const server = (await startDevAuthorizationServer(config, logger)) ?? null;
    app.decorate('devAuthorizationServer', server);
    if (server === null) return;
    app.addHook('onClose', async () => server.close());
    logger.warn(
      { issuer: server.issuer },
      'The DEVELOPMENT authorization server is running (demo user, automatic consent). Never expose it: loopback only.',
    );
    registerDevAuthorizationServerRoutes(app, server);
  },
  { name: 'mcpgw-dev-authorization-server', dependencies: ['mcpgw-settings'] },
);

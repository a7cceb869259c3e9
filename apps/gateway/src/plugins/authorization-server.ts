import type { AuthorizationServerSettings, TenantConfig } from '@mcpgw/config';
import type {
  Adapter,
  Configuration,
  FindAccount,
  GrantTypeRegistration,
  InteractionHandler,
  TenantAuthorizationServers,
} from '@mcpgw/authorization-server';
import {
  authorizationServerIssuer,
  createMemoryAdapter,
  createTenantAuthorizationServer,
  createTenantAuthorizationServers,
  demoAutoConsent,
  findDemoAccount,
  loadOrCreateKeystore,
  publicKeysOf,
} from '@mcpgw/authorization-server';
import type { HostedIssuer, TenantRuntime } from '@mcpgw/tenancy';
import { hostedAuthorizationServerOf, tenantResourceUri } from '@mcpgw/tenancy';
import fastifyPlugin from 'fastify-plugin';
import type { JWK } from 'jose';
import { join } from 'node:path';
import { adminSignInAtHostedServer, tenantAuthorizationServerDir, tenantKeystorePath } from '../local-issuers.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Every tenant's hosted OAuth 2.1 authorization server on this replica (docs/adr/0011). */
    authorizationServers: TenantAuthorizationServers;
    /** A tenant's hosted issuer with its current public keys, for its runtime's authenticator; undefined without one. */
    hostedIssuerOf: (tenant: TenantConfig) => Promise<HostedIssuer | undefined>;
  }
}

/**
 * The modules a hosted server is built from, per tenant. Each is optional
 * here only until its module lands; the defaults serve the loopback demo
 * login alone:
 * - `signingKeys`: the control plane's sealed, rotated per-tenant keys
 *   (default: a keystore file per tenant under DATA_DIR);
 * - `adapter`: the SQL and Redis adapters (default: memory, registered
 *   clients in a file under DATA_DIR: one replica only);
 * - `findAccount` and `interactions`: the upstream sign-in and the pages
 *   (default: none, except the demo login's account and automatic consent);
 * - `clientPolicy`: Client ID Metadata Document trust, registration rules;
 * - `grantTypes`: the enterprise-managed JWT bearer grant.
 */
export interface AuthorizationServerModules {
  signingKeys?(tenantId: string): Promise<{ keys: JWK[] }>;
  adapter?(
    tenantId: string,
    settings: AuthorizationServerSettings,
  ): Promise<{ factory: (model: string) => Adapter; close?(): Promise<void> }>;
  findAccount?(tenantId: string, settings: AuthorizationServerSettings): FindAccount;
  interactions?(tenantId: string, settings: AuthorizationServerSettings): InteractionHandler;
  clientPolicy?(tenantId: string, settings: AuthorizationServerSettings): Partial<Configuration> | undefined;
  grantTypes?(tenantId: string, settings: AuthorizationServerSettings): GrantTypeRegistration[];
}

export interface AuthorizationServerPluginOptions {
  modules?: AuthorizationServerModules;
}

/**
 * Decorates the per-tenant registry of hosted authorization servers and the
 * hosted issuer each tenant's runtime trusts. Registered before the tenants
 * plugin (a runtime needs its tenant's keys); the routes come later
 * (routes/authorization-server.ts). Servers are made on a tenant's first
 * request and follow its runtime.
 */
export const authorizationServerPlugin = fastifyPlugin<AuthorizationServerPluginOptions>(
  async (app, { modules = {} }) => {
    const { config, baseUrls, keys, logger } = app.settings;
    const signingKeys =
      modules.signingKeys ??
      (async (tenantId: string) => (await loadOrCreateKeystore(tenantKeystorePath(config, tenantId))).privateJwks);

    app.decorate('hostedIssuerOf', async (tenant: TenantConfig): Promise<HostedIssuer | undefined> => {
      if (hostedAuthorizationServerOf(tenant) === undefined) return undefined;
      return {
        issuer: authorizationServerIssuer(baseUrls[0], tenant.id),
        publicJwks: publicKeysOf(await signingKeys(tenant.id)),
      };
    });

    const servers = createTenantAuthorizationServers<TenantRuntime>({
      runtimeOf: (tenantId) => app.tenants.serving.get(tenantId),
      hasAuthorizationServer: (runtime) => runtime.hostedIssuer !== undefined,
      logger,
      async create(tenantId, runtime) {
        const tenant = runtime.config;
        const settings = hostedAuthorizationServerOf(tenant)!;
        const serverLogger = logger.child({ component: 'authorization-server', tenant: tenantId });
        const demo = 'demo' in settings.upstream;
        const findAccount = demo ? findDemoAccount : modules.findAccount?.(tenantId, settings);
        const interactions = demo ? demoAutoConsent : modules.interactions?.(tenantId, settings);
        if (findAccount === undefined || interactions === undefined) {
          throw new Error(`tenant '${tenantId}': the upstream sign-in of its authorization server is not available`);
        }
        const adapter =
          (await modules.adapter?.(tenantId, settings)) ??
          (await memoryAdapter(join(tenantAuthorizationServerDir(config, tenantId), 'clients.jsonl'), settings));
        const adminSignIn = adminSignInAtHostedServer(baseUrls, tenant);
        const scopesSupported = runtime.auth?.metadata.scopes_supported;
        try {
          const server = await createTenantAuthorizationServer({
            tenantId,
            issuer: authorizationServerIssuer(baseUrls[0], tenantId),
            resources: baseUrls.map((base) => tenantResourceUri(base, tenantId)),
            // The tenant's advertised scopes unless the setting names its own.
            scopes: settings.scopes ?? (Array.isArray(scopesSupported) ? (scopesSupported as string[]) : []),
            settings,
            signingKeys: await signingKeys(tenantId),
            adapter: adapter.factory,
            findAccount,
            interactions,
            ...(modules.clientPolicy === undefined ? {} : { clientPolicy: modules.clientPolicy(tenantId, settings) }),
            ...(modules.grantTypes === undefined ? {} : { grantTypes: modules.grantTypes(tenantId, settings) }),
            cookieKeys: keys.authorizationServerCookies(tenantId),
            staticClients: adminSignIn.clients,
            extraResources: adminSignIn.resources,
            logger: serverLogger,
          });
          if (demo) {
            serverLogger.warn(
              { issuer: server.issuer },
              'The DEMO LOGIN is running (demo user, automatic consent). Never expose it: loopback only.',
            );
          }
          return { server, ...(adapter.close === undefined ? {} : { dispose: adapter.close }) };
        } catch (error) {
          await adapter.close?.();
          throw error;
        }
      },
    });
    app.decorate('authorizationServers', servers);
    app.addHook('onClose', async () => servers.close());

    async function memoryAdapter(clientsLog: string, settings: AuthorizationServerSettings) {
      const memory = await createMemoryAdapter({
        clientsLog,
        maxClients: settings.clients.registration.maxClients,
        logger: logger.child({ component: 'authorization-server' }),
      });
      return { factory: memory.factory, close: () => memory.flush() };
    }
  },
  { name: 'mcpgw-authorization-server', dependencies: ['mcpgw-settings'] },
);

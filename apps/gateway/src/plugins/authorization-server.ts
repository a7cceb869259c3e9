import type { AuthorizationServerSettings, TenantConfig } from '@mcpgw/config';
import type {
  Adapter,
  TenantAuthorizationServers,
  TenantModuleStores,
  TenantModulesDeps,
} from '@mcpgw/authorization-server';
import {
  authorizationServerIssuer,
  createMemoryAdapter,
  createMemoryTenantStores,
  createTenantAuthorizationServer,
  createTenantAuthorizationServers,
  createTenantModules,
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
 * The modules a hosted server is built from, per tenant (default: the
 * composition of packages/authorization-server, createTenantModules, over
 * stores in this process's memory):
 * - `signingKeys`: the control plane's sealed, rotated per-tenant keys
 *   (default: a keystore file per tenant under DATA_DIR);
 * - `adapter`: the SQL and Redis adapters (default: memory, registered
 *   clients in a file under DATA_DIR: one replica only);
 * - `stores`: accounts, pending sign-ins, consent, assertion replay and
 *   registered clients (default: memory, one replica only);
 * - `metadataDocumentCertificates`: tests only, see TenantModulesDeps.
 * The sign-in, consent, accounts, client policy and enterprise grant of
 * each tenant come from createTenantModules over these.
 */
export interface AuthorizationServerModules {
  signingKeys?(tenantId: string): Promise<{ keys: JWK[] }>;
  adapter?(
    tenantId: string,
    settings: AuthorizationServerSettings,
  ): Promise<{ factory: (model: string) => Adapter; close?(): Promise<void> }>;
  stores?: TenantModuleStores;
  metadataDocumentCertificates?: readonly string[];
  /** The upstream sign-in's fetch for operators' upstreams (no egress guard); tests only. */
  upstreamFetch?: typeof fetch;
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
    const { config, baseUrls, keys, egress, logger } = app.settings;
    const moduleDeps: TenantModulesDeps = {
      stores: modules.stores ?? createMemoryTenantStores(),
      csrfKey: (tenantId) => keys.authorizationServerCsrf(tenantId),
      egress,
      ...(modules.metadataDocumentCertificates === undefined
        ? {}
        : { metadataDocumentCertificates: modules.metadataDocumentCertificates }),
      ...(modules.upstreamFetch === undefined ? {} : { fetch: modules.upstreamFetch }),
    };
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
        const issuer = authorizationServerIssuer(baseUrls[0], tenantId);
        const resources = baseUrls.map((base) => tenantResourceUri(base, tenantId));
        const scopesSupported = runtime.auth?.metadata.scopes_supported;
        // The tenant's advertised scopes unless the setting names its own.
        const scopes = settings.scopes ?? (Array.isArray(scopesSupported) ? (scopesSupported as string[]) : []);
        const adapter =
          (await modules.adapter?.(tenantId, settings)) ??
          (await memoryAdapter(join(tenantAuthorizationServerDir(config, tenantId), 'clients.jsonl'), settings));
        const adminSignIn = adminSignInAtHostedServer(baseUrls, tenant);
        let tenantModules: ReturnType<typeof createTenantModules> | undefined;
        const dispose = async () => {
          tenantModules?.dispose();
          await adapter.close?.();
        };
        try {
          tenantModules = createTenantModules(
            {
              tenantId,
              tenantName: tenant.name ?? tenantId,
              issuer,
              resources,
              scopes,
              settings,
              settingsEgress: runtime.authorizationServerEgress,
              logger: serverLogger,
            },
            moduleDeps,
          );
          const server = await createTenantAuthorizationServer({
            tenantId,
            issuer,
            resources,
            scopes,
            settings,
            signingKeys: await signingKeys(tenantId),
            adapter: adapter.factory,
            findAccount: tenantModules.findAccount,
            interactions: tenantModules.interactions,
            clientPolicy: tenantModules.clientPolicy,
            grantTypes: tenantModules.grantTypes,
            attachProvider: tenantModules.attachProvider,
            cookieKeys: keys.authorizationServerCookies(tenantId),
            staticClients: adminSignIn.clients,
            extraResources: adminSignIn.resources,
            logger: serverLogger,
          });
          if (demo) {
            serverLogger.warn(
              { issuer: server.issuer },
              'The DEMO LOGIN is running (every visitor is the demo user). Never expose it: loopback only.',
            );
          }
          return { server, dispose };
        } catch (error) {
          await dispose();
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

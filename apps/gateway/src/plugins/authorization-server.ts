import type { TenantConfig } from '@mcpgw/config';
import type { ControlPlaneStore } from '@mcpgw/control-plane';
import { errorSummary } from '@mcpgw/core';
import type { TenantAuthorizationServers, TenantModulesDeps } from '@mcpgw/authorization-server';
import {
  authorizationServerIssuer,
  createTenantAuthorizationServer,
  createTenantAuthorizationServers,
  createTenantModules,
  loadOrCreateKeystore,
  publicKeysOf,
  storedTenantStores,
} from '@mcpgw/authorization-server';
import type { HostedIssuer, TenantRuntime } from '@mcpgw/tenancy';
import { hostedAuthorizationServerOf, tenantResourceUri } from '@mcpgw/tenancy';
import fastifyPlugin from 'fastify-plugin';
import type { JWK } from 'jose';
import { adminSignInAtHostedServer, tenantKeystorePath, usesDemoLogin } from '../local-issuers.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Every tenant's hosted OAuth 2.1 authorization server on this replica (docs/adr/0011). */
    authorizationServers: TenantAuthorizationServers;
    /** A tenant's hosted issuer with its current public keys, for its runtime's authenticator; undefined without one. */
    hostedIssuerOf: (tenant: TenantConfig) => Promise<HostedIssuer | undefined>;
    /**
     * The private keys a tenant's tokens are signed with, the signing key first: those its hosted
     * server signs with and publishes (a demo-login tenant's keystore file, else the store's, made
     * on first use). For the identity tokens of S3 caller identity (tenant-identity-tokens.ts).
     */
    tenantSigningKeysOf: (tenantId: string) => Promise<readonly JWK[]>;
  }
}

/**
 * What tests may change of the modules every tenant's server is composed of
 * (createTenantModules over the control plane's store); nothing of it comes
 * from configuration.
 */
export interface AuthorizationServerModules {
  /** Certificates (PEM) trusted for Client ID Metadata Document servers instead of the system's: a test server's. */
  metadataDocumentCertificates?: readonly string[];
  /** The upstream sign-in's fetch for an operator's upstream (a tenant admin's goes through the egress guard). */
  upstreamFetch?: typeof fetch;
}

export interface AuthorizationServerPluginOptions {
  modules?: AuthorizationServerModules;
  /** The tenants' audit log: the servers' own steps are recorded there (docs/admin-api.md, "Audit log"). */
  audit?: Pick<ControlPlaneStore, 'recordEvent'>;
}

/** Signing keys and the public keys published from them, as one runtime captured them. */
type KeySet = { keys: JWK[] };

/**
 * Decorates the per-tenant registry of hosted authorization servers and the
 * hosted issuer each tenant's runtime trusts. Registered before the tenants
 * plugin (a runtime needs its tenant's keys); the routes come later
 * (routes/authorization-server.ts). Servers are made on a tenant's first
 * request and follow its runtime.
 *
 * Keys: the control plane's sealed, rotated keys of the tenant
 * (authorization-server-store.ts); a tenant on the loopback demo login
 * keeps a keystore file under DATA_DIR instead, which `npm run token` signs
 * with while the gateway holds the embedded database. The keys a runtime's
 * verifier trusts are the keys its server signs with: both are read once,
 * when the runtime is built, and a change of the tenant's keys on any
 * replica builds its runtime again.
 */
export const authorizationServerPlugin = fastifyPlugin<AuthorizationServerPluginOptions>(
  async (app, { modules = {}, audit }) => {
    const { config, baseUrls, keys, egress, logger } = app.settings;
    const storage = app.authorizationServerStorage;
    const moduleDeps: TenantModulesDeps = {
      stores: storedTenantStores(storage),
      csrfKey: (tenantId) => keys.authorizationServerCsrf(tenantId),
      egress,
      ...(modules.metadataDocumentCertificates === undefined
        ? {}
        : { metadataDocumentCertificates: modules.metadataDocumentCertificates }),
      ...(modules.upstreamFetch === undefined ? {} : { fetch: modules.upstreamFetch }),
      ...(audit === undefined ? {} : { recordEvent: (context, event) => audit.recordEvent(context, event) }),
    };
    const signingKeysOf = async (tenant: TenantConfig): Promise<KeySet> =>
      usesDemoLogin(tenant)
        ? (await loadOrCreateKeystore(tenantKeystorePath(config, tenant.id))).privateJwks
        : { keys: (await app.authorizationServerSigningKeys.signingKeysOf(tenant.id)).keys };
    app.decorate('tenantSigningKeysOf', async (tenantId: string): Promise<readonly JWK[]> => {
      // The served configuration says whether the tenant is on the demo login; a tenant not (yet)
      // served has no keystore file its server would publish, so the store's keys are its own.
      const tenant = app.tenants.serving.get(tenantId)?.config;
      if (tenant !== undefined && hostedAuthorizationServerOf(tenant) === undefined) {
        // Whoever verifies what these keys sign (AWS STS, for an S3 source's callers) reads the
        // tenant's JWKS from its hosted server; a tenant without one publishes none.
        throw new Error(
          `tenant '${tenantId}' has no hosted authorization server, so no JWKS is published at ` +
            `${authorizationServerIssuer(baseUrls[0], tenantId)}/jwks to verify its identity tokens: ` +
            'give the tenant "authorizationServer" (docs/authorization-server.md)',
        );
      }
      if (tenant !== undefined) return (await signingKeysOf(tenant)).keys;
      return (await app.authorizationServerSigningKeys.signingKeysOf(tenantId)).keys;
    });
    // By the configuration object of the runtime they were read for.
    const capturedKeys = new WeakMap<TenantConfig, KeySet>();

    app.decorate('hostedIssuerOf', async (tenant: TenantConfig): Promise<HostedIssuer | undefined> => {
      if (hostedAuthorizationServerOf(tenant) === undefined) return undefined;
      const signing = await signingKeysOf(tenant);
      capturedKeys.set(tenant, signing);
      return { issuer: authorizationServerIssuer(baseUrls[0], tenant.id), publicJwks: publicKeysOf(signing) };
    });

    const servers = createTenantAuthorizationServers<TenantRuntime>({
      runtimeOf: (tenantId) => app.tenants.serving.get(tenantId),
      hasAuthorizationServer: (runtime) => runtime.hostedIssuer !== undefined,
      logger,
      async create(tenantId, runtime) {
        const tenant = runtime.config;
        const settings = hostedAuthorizationServerOf(tenant)!;
        const serverLogger = logger.child({ component: 'authorization-server', tenant: tenantId });
        const issuer = authorizationServerIssuer(baseUrls[0], tenantId);
        const resources = baseUrls.map((base) => tenantResourceUri(base, tenantId));
        const scopesSupported = runtime.auth?.metadata.scopes_supported;
        // The tenant's advertised scopes unless the setting names its own.
        const scopes = settings.scopes ?? (Array.isArray(scopesSupported) ? (scopesSupported as string[]) : []);
        const signing = capturedKeys.get(tenant) ?? (await signingKeysOf(tenant));
        const adminSignIn = adminSignInAtHostedServer(baseUrls, tenant);
        const tenantModules = createTenantModules(
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
        try {
          const server = await createTenantAuthorizationServer({
            tenantId,
            issuer,
            resources,
            scopes,
            settings,
            signingKeys: signing,
            adapter: storage.adapterFor(tenantId),
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
          if ('demo' in settings.upstream) {
            serverLogger.warn(
              { issuer: server.issuer },
              'The DEMO LOGIN is running (every visitor is the demo user). Never expose it: loopback only.',
            );
          }
          return { server, dispose: async () => tenantModules.dispose() };
        } catch (error) {
          tenantModules.dispose();
          throw error;
        }
      },
    });
    app.decorate('authorizationServers', servers);

    // A tenant's keys changed (rotated here or on another replica): its runtime is built again, so its
    // verifier trusts the new key and its server signs with it. Built from whatever serves the tenant
    // when the build's turn comes (builds of one tenant run in order), never from an older revision.
    const rebuild = (tenantId: string): void => {
      const serving = app.tenants.serving.get(tenantId);
      if (serving?.hostedIssuer === undefined || usesDemoLogin(serving.config)) return;
      void keysChangedSince(tenantId, serving.hostedIssuer.publicJwks.keys).then((changed) => {
        if (changed) rebuildNow(tenantId);
      });
    };
    /** Whether the tenant's keys differ from those its runtime trusts (a key made on first use is already there). */
    const keysChangedSince = async (tenantId: string, trusted: readonly JWK[]): Promise<boolean> => {
      try {
        const current = await app.authorizationServerSigningKeys.signingKeysOf(tenantId);
        const kids = (keys: readonly JWK[]) => keys.map((key) => key.kid).join(' ');
        return kids(current.jwks.keys) !== kids(trusted);
      } catch (error) {
        logger.warn(
          { tenant: tenantId, err: errorSummary(error) },
          'authorization server: reading signing keys failed',
        );
        return true;
      }
    };
    const rebuildNow = (tenantId: string): void => {
      void app.tenants
        .apply(tenantId, async () => {
          const current = app.tenants.serving.get(tenantId);
          if (current === undefined) throw new Error(`tenant '${tenantId}' is no longer served`);
          return app.buildTenantRuntime(current.config, current.placement);
        })
        .then((outcome) => {
          if (!outcome.ok) {
            logger.warn(
              { tenant: tenantId, err: errorSummary(outcome.error) },
              'authorization server: the runtime could not be built with the new signing keys',
            );
          }
        });
    };
    const stopWatching = await app.authorizationServerSigningKeys.watch(rebuild);
    app.addHook('onClose', async () => {
      await stopWatching();
      await servers.close();
    });
  },
  {
    name: 'mcpgw-authorization-server',
    dependencies: ['mcpgw-settings', 'mcpgw-authorization-server-store'],
  },
);

import type { GatewayCache } from '@mcpgw/cache';
import { createCachingSource, withResultCache } from '@mcpgw/cache';
import type { Catalog } from '@mcpgw/catalog';
import { createCatalog } from '@mcpgw/catalog';
import type { VerifierObserver } from '@mcpgw/auth';
import type { EgressGuard, Logger, Source, SourceFactory } from '@mcpgw/core';
import type { IssuerEntry, TenantConfig } from '@mcpgw/config';
import type { TenantAdminWrites } from './control-plane/tenant-entries.js';
import type { CursorCodec, ServerIdentity } from '@mcpgw/protocol';
import { serverIdentity } from './server-identity.js';
import type { PinnedDevAuthorizationServer, TenantAuthenticator } from './tenant-auth.js';
import { createTenantAuthenticator } from './tenant-auth.js';

/** Everything the gateway holds for one tenant while it runs. */
export interface TenantRuntime {
  readonly config: TenantConfig;
  readonly catalog: Catalog;
  readonly server: ServerIdentity;
  /** Absent for an anonymous (loopback development) tenant. */
  readonly auth: TenantAuthenticator | undefined;
  /**
   * The egress guard an issuer's fetches go through: the deployment's for an
   * issuer a tenant admin wrote, none for an operator's (the admin API
   * verifies tenant admins' tokens with the same issuers).
   */
  issuerEgress(entry: IssuerEntry): EgressGuard | undefined;
  /** Stops its authenticator and closes its sources (the registry calls it once no request holds it). */
  close(): Promise<void>;
}

export interface RuntimeOptions {
  registry: ReadonlyMap<string, SourceFactory>;
  cursors: CursorCodec;
  /** Both cache layers: each source's pages, and each caller's finished results. */
  cache: GatewayCache;
  logger: Logger;
  baseUrl: string;
  /** The other base URLs the gateway answers as (loopback names of a loopback bind). */
  aliasBaseUrls: readonly string[];
  devAuthorizationServer: PinnedDevAuthorizationServer | undefined;
  /** The deployment's egress policy (EGRESS_ALLOW), for what tenant admins configured. */
  egress: EgressGuard;
  /** Metrics and tracing hooks: around each source's backend calls, each authentication, each verifier's fetches. */
  observe?: RuntimeObservers;
}

/** How the app observes a tenant's runtime (apps/gateway/src/observability). */
export interface RuntimeObservers {
  source(source: Source): Source;
  authenticator(auth: TenantAuthenticator): TenantAuthenticator;
  verifier: VerifierObserver;
}

/**
 * Opens one tenant's sources and builds its authenticator and catalog. A
 * source that fails to open fails the build, naming the tenant and source,
 * after closing what was already opened; the registry then keeps serving the
 * tenant's previous runtime, if any. The sources and issuers named in
 * `tenantAdminWrites` connect under the egress policy; without it (tenants
 * from the bootstrap file alone) everything is the operator's.
 */
export async function createTenantRuntime(
  tenant: TenantConfig,
  configDir: string,
  options: RuntimeOptions,
  tenantAdminWrites?: TenantAdminWrites,
): Promise<TenantRuntime> {
  const { registry, cursors, logger } = options;
  const issuerEgress = (entry: IssuerEntry): EgressGuard | undefined =>
    tenantAdminWrites?.issuers.has('development' in entry ? 'development' : entry.issuer) === true
      ? options.egress
      : undefined;
  const sources: Source[] = [];
  try {
    for (const entry of tenant.sources) {
      const factory = registry.get(entry.type);
      if (factory === undefined) throw new Error(`Tenant '${tenant.id}': unknown source type '${entry.type}'`);
      const sourceLogger = logger.child({ tenant: tenant.id, source: entry.id });
      try {
        const created = await factory.create(entry.options, {
          sourceId: entry.id,
          tenantId: tenant.id,
          configDir,
          logger: sourceLogger,
          ...(tenantAdminWrites?.sources.has(entry.id) === true ? { egress: options.egress } : {}),
        });
        sources.push(
          createCachingSource(options.observe?.source(created) ?? created, {
            tenantId: tenant.id,
            cache: options.cache,
            ttlMs: entry.ttlMs,
            logger: sourceLogger,
          }),
        );
      } catch (error) {
        throw new Error(
          `Tenant '${tenant.id}', source '${entry.id}' (${entry.type}) failed to start: ${(error as Error).message}`,
          { cause: error },
        );
      }
    }
  } catch (error) {
    await Promise.allSettled(sources.map((source) => source.close()));
    throw error;
  }
  const authenticator =
    tenant.auth === undefined
      ? undefined
      : createTenantAuthenticator(tenant, {
          baseUrl: options.baseUrl,
          aliasBaseUrls: options.aliasBaseUrls,
          devAuthorizationServer: options.devAuthorizationServer,
          issuerEgress,
          logger: logger.child({ tenant: tenant.id }),
          ...(options.observe === undefined ? {} : { verifierObserver: options.observe.verifier }),
        });
  const auth =
    authenticator === undefined ? undefined : (options.observe?.authenticator(authenticator) ?? authenticator);
  return {
    config: tenant,
    catalog: withResultCache(
      createCatalog({ tenantId: tenant.id, sources, cursors, logger: logger.child({ tenant: tenant.id }) }),
      options.cache,
    ),
    server: serverIdentity(tenant.name),
    auth,
    issuerEgress,
    async close() {
      auth?.close();
      await Promise.allSettled(sources.map((source) => source.close()));
    },
  };
}

import type { GatewayCache } from '@mcpgw/cache';
import { createCachingSource, withResultCache } from '@mcpgw/cache';
import type { Catalog } from '@mcpgw/catalog';
import { createCatalog, createUnavailableSource } from '@mcpgw/catalog';
import type { VerifierObserver } from '@mcpgw/auth';
import type { EgressGuard, Logger, Source, SourceFactory } from '@mcpgw/core';
import type { IssuerEntry, TenantConfig } from '@mcpgw/config';
import type { TenantAdminWrites } from './control-plane/tenant-entries.js';
import type { CursorCodec, ServerIdentity } from '@mcpgw/protocol';
import { serverIdentity } from './server-identity.js';
import type { HostedIssuer } from './hosted-authorization-server.js';
import type { TenantAuthenticator } from './tenant-auth.js';
import { createTenantAuthenticator } from './tenant-auth.js';

/** Everything the gateway holds for one tenant while it runs. */
export interface TenantRuntime {
  readonly config: TenantConfig;
  /** The control-plane revision it was built from (0 for a configuration file's tenant). */
  readonly revision: number;
  /** Sources that failed to open, by id, with why: each serves as unavailable in this runtime. */
  readonly failedSources: ReadonlyMap<string, string>;
  readonly catalog: Catalog;
  readonly server: ServerIdentity;
  /** Absent for an anonymous (loopback development) tenant. */
  readonly auth: TenantAuthenticator | undefined;
  /** The tenant's hosted issuer and the public keys its authenticator trusts; absent without a hosted server. */
  readonly hostedIssuer: HostedIssuer | undefined;
  /**
   * The egress guard an issuer's fetches go through: the deployment's for an
   * issuer a tenant admin wrote, none for an operator's (the admin API
   * verifies tenant admins' tokens with the same issuers).
   */
  issuerEgress(entry: IssuerEntry): EgressGuard | undefined;
  /**
   * The egress guard of the hosted authorization server's own fetches (its
   * upstream, its enterprise assertion issuers): the deployment's when a
   * tenant admin wrote `authorizationServer`, none for an operator's.
   */
  readonly authorizationServerEgress: EgressGuard | undefined;
  /** Where it was placed from (revision, tenant admins' writes): the same runtime is built again from it and `config`. */
  readonly placement: StoredPlacement;
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
  /**
   * The hosted issuer of a tenant with a hosted authorization server
   * (hostedAuthorizationServerOf), with its current public keys; absent or
   * undefined for other tenants. Keys change with a new runtime only, so a key
   * rotation rebuilds the tenant's runtime (docs/adr/0011).
   */
  hostedIssuerOf?: (tenant: TenantConfig) => Promise<HostedIssuer | undefined>;
  /** The deployment's egress policy (EGRESS_ALLOW), for what tenant admins configured. */
  egress: EgressGuard;
  /** Metrics and tracing hooks: around each source's backend calls, each authentication, each verifier's fetches. */
  observe?: RuntimeObservers;
  /** How long one source may take to open before it serves as unavailable. Default SOURCE_OPEN_TIMEOUT_MS. */
  sourceOpenTimeoutMs?: number;
}

/** Where a control-plane tenant's runtime comes from: its revision, and which entries a tenant admin wrote. */
export interface StoredPlacement {
  /** The control-plane revision (0, the default, for a configuration file's tenant). */
  readonly revision?: number;
  readonly tenantAdminWrites?: TenantAdminWrites;
}

/**
 * A source still opening after this long serves as unavailable in the new
 * runtime: the tenant's other changes (a revoked grant) must not wait on a
 * backend that does not answer.
 */
export const SOURCE_OPEN_TIMEOUT_MS = 10_000;

/** How the app observes a tenant's runtime (apps/gateway/src/observability). */
export interface RuntimeObservers {
  source(source: Source): Source;
  authenticator(auth: TenantAuthenticator): TenantAuthenticator;
  verifier: VerifierObserver;
}

/**
 * Opens one tenant's sources and builds its authenticator and catalog. A
 * source that fails to open (or is still opening after
 * `sourceOpenTimeoutMs`) does not fail the build: it serves as an
 * unavailable source inside the new runtime (listings name it in `_meta`,
 * reads of its URIs fail), so every other part of the committed
 * configuration, a revoked grant or issuer first of all, is served at once
 * whatever a backend does. What does fail the build is the configuration
 * itself (an unknown source type, an authenticator that cannot be built):
 * the registry then stops serving the tenant rather than keep an older
 * revision.
 * The sources and issuers named in `stored.tenantAdminWrites` connect under
 * the egress policy; without it (tenants from the bootstrap file alone)
 * everything is the operator's.
 */
export async function createTenantRuntime(
  tenant: TenantConfig,
  configDir: string,
  options: RuntimeOptions,
  stored: StoredPlacement = {},
): Promise<TenantRuntime> {
  const { registry, cursors, logger } = options;
  const { revision = 0, tenantAdminWrites } = stored;
  const timeoutMs = options.sourceOpenTimeoutMs ?? SOURCE_OPEN_TIMEOUT_MS;
  const issuerEgress = (entry: IssuerEntry): EgressGuard | undefined =>
    tenantAdminWrites?.issuers.has('development' in entry ? 'development' : entry.issuer) === true
      ? options.egress
      : undefined;
  const sources: Source[] = [];
  const failedSources = new Map<string, string>();
  try {
    for (const entry of tenant.sources) {
      const factory = registry.get(entry.type);
      if (factory === undefined) throw new Error(`Tenant '${tenant.id}': unknown source type '${entry.type}'`);
      const sourceLogger = logger.child({ tenant: tenant.id, source: entry.id });
      let created: Source;
      try {
        created = await openWithin(
          () =>
            factory.create(entry.options, {
              sourceId: entry.id,
              tenantId: tenant.id,
              configDir,
              logger: sourceLogger,
              ...(tenantAdminWrites?.sources.has(entry.id) === true ? { egress: options.egress } : {}),
            }),
          timeoutMs,
        );
      } catch (error) {
        const reason = (error as Error).message;
        sourceLogger.error(
          { err: reason, revision },
          'source failed to start: it is served as unavailable in this revision',
        );
        failedSources.set(entry.id, `source '${entry.id}' (${entry.type}) failed to start: ${reason}`);
        sources.push(
          createUnavailableSource({
            id: entry.id,
            kind: entry.type,
            prefixes: factory.uriSpace?.(entry.options, entry.id).prefixes ?? [],
            reason,
          }),
        );
        continue;
      }
      sources.push(
        createCachingSource(options.observe?.source(created) ?? created, {
          tenantId: tenant.id,
          revision,
          cache: options.cache,
          ttlMs: entry.ttlMs,
          logger: sourceLogger,
        }),
      );
    }
  } catch (error) {
    await Promise.allSettled(sources.map((source) => source.close()));
    throw error;
  }
  let auth: TenantAuthenticator | undefined;
  let catalog: Catalog;
  let hostedIssuer: HostedIssuer | undefined;
  try {
    hostedIssuer = await options.hostedIssuerOf?.(tenant);
    const authenticator =
      tenant.auth === undefined
        ? undefined
        : createTenantAuthenticator(tenant, {
            baseUrl: options.baseUrl,
            aliasBaseUrls: options.aliasBaseUrls,
            hostedIssuer,
            issuerEgress,
            logger: logger.child({ tenant: tenant.id }),
            ...(options.observe === undefined ? {} : { verifierObserver: options.observe.verifier }),
          });
    auth = authenticator === undefined ? undefined : (options.observe?.authenticator(authenticator) ?? authenticator);
    catalog = withResultCache(
      createCatalog({ tenantId: tenant.id, sources, cursors, logger: logger.child({ tenant: tenant.id }) }),
      options.cache,
      revision,
    );
  } catch (error) {
    auth?.close();
    await Promise.allSettled(sources.map((source) => source.close()));
    throw error;
  }
  return {
    config: tenant,
    revision,
    failedSources,
    catalog,
    server: serverIdentity(tenant.name),
    auth,
    hostedIssuer,
    issuerEgress,
    authorizationServerEgress: tenantAdminWrites?.authorizationServer === true ? options.egress : undefined,
    placement: stored,
    async close() {
      auth?.close();
      await Promise.allSettled(sources.map((source) => source.close()));
    },
  };
}

/**
 * `open()`, or a rejection once `timeoutMs` passed; a source that opens
 * after that is closed at once (nothing holds it).
 */
async function openWithin(open: () => Source | Promise<Source>, timeoutMs: number): Promise<Source> {
  const opening = Promise.resolve().then(open);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still opening after ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
  });
  try {
    return await Promise.race([opening, timedOut]);
  } catch (error) {
    void opening.then(
      (late) => late.close().catch(() => undefined),
      () => undefined,
    );
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

import type { GatewayCache } from '@mcpgw/cache';
import { createCachingSource, withResultCache } from '@mcpgw/cache';
import type { Catalog } from '@mcpgw/catalog';
import { createCatalog } from '@mcpgw/catalog';
import type { Logger, Source, SourceFactory } from '@mcpgw/core';
import type { GatewayConfig, TenantConfig } from '@mcpgw/config';
import type { CursorCodec, ServerIdentity } from '@mcpgw/protocol';
import { serverIdentity } from './server-identity.js';
import type { DevelopmentIssuer, TenantAuthenticator } from './tenant-auth.js';
import { createTenantAuthenticator } from './tenant-auth.js';

/** Everything the gateway holds for one tenant while it runs. */
export interface TenantRuntime {
  readonly config: TenantConfig;
  readonly catalog: Catalog;
  readonly server: ServerIdentity;
  /** Absent for an anonymous (loopback development) tenant. */
  readonly auth: TenantAuthenticator | undefined;
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
  development: DevelopmentIssuer | undefined;
}

/**
 * Creates every tenant's sources and catalog. Any failure stops startup with
 * the tenant and source named, after closing what was already opened.
 */
export async function createTenantRuntimes(
  config: GatewayConfig,
  options: RuntimeOptions,
): Promise<Map<string, TenantRuntime>> {
  const { registry, cursors, logger } = options;
  const runtimes = new Map<string, TenantRuntime>();
  const opened: Source[] = [];
  try {
    for (const tenant of config.tenants) {
      const sources: Source[] = [];
      for (const entry of tenant.sources) {
        const factory = registry.get(entry.type);
        if (factory === undefined) throw new Error(`unknown source type '${entry.type}'`);
        try {
          const sourceLogger = logger.child({ tenant: tenant.id, source: entry.id });
          const created = await factory.create(entry.options, {
            sourceId: entry.id,
            tenantId: tenant.id,
            configDir: config.configDir,
            logger: sourceLogger,
          });
          const source = createCachingSource(created, {
            tenantId: tenant.id,
            cache: options.cache,
            ttl: entry.ttl,
            logger: sourceLogger,
          });
          sources.push(source);
          opened.push(source);
        } catch (error) {
          throw new Error(
            `Tenant '${tenant.id}', source '${entry.id}' (${entry.type}) failed to start: ${(error as Error).message}`,
            {
              cause: error,
            },
          );
        }
      }
      runtimes.set(tenant.id, {
        config: tenant,
        catalog: withResultCache(
          createCatalog({ tenantId: tenant.id, sources, cursors, logger: logger.child({ tenant: tenant.id }) }),
          options.cache,
        ),
        server: serverIdentity(tenant.name),
        auth:
          tenant.auth === undefined
            ? undefined
            : createTenantAuthenticator(tenant, {
                baseUrl: options.baseUrl,
                aliasBaseUrls: options.aliasBaseUrls,
                development: options.development,
                logger: logger.child({ tenant: tenant.id }),
              }),
      });
    }
  } catch (error) {
    await Promise.allSettled(opened.map((source) => source.close()));
    throw error;
  }
  return runtimes;
}

export async function closeTenantRuntimes(runtimes: Map<string, TenantRuntime>): Promise<void> {
  for (const runtime of runtimes.values()) runtime.auth?.close();
  await Promise.allSettled([...runtimes.values()].flatMap((runtime) => runtime.catalog.sources.map((s) => s.close())));
}

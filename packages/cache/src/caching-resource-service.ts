import type { AccessScope, SourceTtl } from '@mcpgw/core';
import type { ReadOutcome, ResourcePage, ResourceService, TemplatePage } from '@mcpgw/protocol';
import type { GatewayCache } from './gateway-cache.js';

export interface CallerCacheContext {
  tenantId: string;
  /** The principal fingerprint from the policy layer: who may reuse an entry. */
  fingerprint: string;
  cache: GatewayCache;
  /**
   * Kinds of result that can never have a `ttlMs` above 0 (every source of
   * the tenant has 0 for them): not even looked up, saving a round trip.
   */
  neverCached?: { lists: boolean; reads: boolean };
}

/**
 * The per-credential result cache (issue 4): finished `resources/list`
 * pages, `resources/templates/list` pages and `resources/read` results,
 * keyed by (tenant, principal fingerprint, method, cursor or uri) and kept
 * for exactly the `ttlMs` the result carries; `ttlMs: 0` is never stored.
 * "Caches MUST NOT be shared across authorization contexts" (2026-07-28
 * server/utilities/caching, Cache Scope): the fingerprint changes with the
 * caller's effective access, so two callers share an entry only when the
 * policy gives them identical access as the same principal.
 *
 * A hit reports the freshness left, not the original `ttlMs`, so a client
 * caching it in turn does not extend its life. Requests carrying
 * `inputResponses` or `requestState` arrive with `cacheable: false` and
 * bypass the cache both ways (Cache Key: they "MUST NOT be cached").
 * "Not found" and errors are never stored.
 */
export function createCachingResourceService(inner: ResourceService, context: CallerCacheContext): ResourceService {
  const { tenantId, fingerprint, cache } = context;
  const lists = !(context.neverCached?.lists ?? false);
  const reads = !(context.neverCached?.reads ?? false);
  const key = (method: string, params: unknown) => ({ layer: 'result' as const, who: fingerprint, method, params });

  return {
    async listResources(cursor, signal, options) {
      const { value, remainingMs } = await cache.lookup<ResourcePage>({
        tenantId,
        key: key('resources/list', cursor ?? null),
        cacheable: lists && (options?.cacheable ?? true),
        ttlMs: (page) => page.ttlMs,
        crossReplica: false,
        signal,
        fetch: (shared) => inner.listResources(cursor, shared ?? signal, options),
      });
      return remainingMs === undefined ? value : { ...value, ttlMs: remainingMs };
    },

    async listTemplates(cursor, signal, options) {
      const { value, remainingMs } = await cache.lookup<TemplatePage>({
        tenantId,
        key: key('resources/templates/list', cursor ?? null),
        cacheable: lists && (options?.cacheable ?? true),
        ttlMs: (page) => page.ttlMs,
        crossReplica: false,
        signal,
        fetch: (shared) => inner.listTemplates(cursor, shared ?? signal, options),
      });
      return remainingMs === undefined ? value : { ...value, ttlMs: remainingMs };
    },

    async read(uri, signal, options) {
      const { value, remainingMs } = await cache.lookup<ReadOutcome | undefined>({
        tenantId,
        key: key('resources/read', uri),
        cacheable: reads && (options?.cacheable ?? true),
        // Absent resources are not stored: the next read asks the source again.
        ttlMs: (outcome) => outcome?.ttlMs ?? 0,
        crossReplica: false,
        signal,
        fetch: (shared) => inner.read(uri, shared ?? signal, options),
      });
      return remainingMs === undefined || value === undefined ? value : { ...value, ttlMs: remainingMs };
    },
  };
}

/** Anything with the catalog's shape: a tenant id, its sources and a per-scope view. */
export interface ScopedCatalog {
  readonly tenantId: string;
  readonly sources: ReadonlyArray<{ readonly ttl: SourceTtl }>;
  forScope(scope: AccessScope): ResourceService;
}

/** The same catalog, whose per-scope views go through the per-credential result cache. */
export function withResultCache<C extends ScopedCatalog>(catalog: C, cache: GatewayCache): C {
  const neverCached = {
    lists: catalog.sources.every((source) => source.ttl.listMs <= 0),
    reads: catalog.sources.every((source) => source.ttl.readMs <= 0),
  };
  return {
    ...catalog,
    forScope: (scope: AccessScope) =>
      createCachingResourceService(catalog.forScope(scope), {
        tenantId: catalog.tenantId,
        fingerprint: scope.fingerprint,
        cache,
        neverCached,
      }),
  };
}

import type { Logger, Source, SourceTtlMs } from '@mcpgw/core';
import { errorSummary, silentLogger } from '@mcpgw/core';
import type { GatewayCache } from './gateway-cache.js';

export interface SourceCacheContext {
  tenantId: string;
  cache: GatewayCache;
  /** Per-source overrides from configuration (`ttlMs` on a source entry); the rest keeps the source's own. */
  ttlMs?: Partial<SourceTtlMs> | undefined;
  logger?: Logger;
}

/**
 * The per-source catalog cache (issue 4): what the backend returned for a
 * page (`listResources` at a position, limit and narrowing) and its templates, shared
 * by every caller of the tenant. The catalog filters by the caller's scope
 * after this, so an entry never depends on who asked. Concurrent identical
 * misses make one backend call: within a replica through a promise map, and
 * across replicas through a short Redis lock the others wait on.
 *
 * Reads are not cached here (the per-credential layer caches finished read
 * results). A change reported by the source's `watch` invalidates the
 * tenant's entries on every replica.
 */
export function createCachingSource(inner: Source, context: SourceCacheContext): Source {
  const { tenantId, cache } = context;
  const logger = context.logger ?? silentLogger;
  const ttlMs: SourceTtlMs = { ...inner.ttlMs, ...context.ttlMs };
  const key = (method: string, params: unknown) => ({ layer: 'source' as const, who: inner.id, method, params });
  const stopWatching = inner.watch?.(() => {
    cache.invalidateTenant(tenantId).catch((error: unknown) => {
      logger.warn({ err: errorSummary(error) }, 'cache invalidation after a source change failed');
    });
  });

  return {
    id: inner.id,
    kind: inner.kind,
    ttlMs,
    async listResources(page, signal) {
      const stored = await cache.getOrFetch({
        tenantId,
        // Keyed by what the backend is asked, narrowing included (issue 15):
        // callers with the same grants share pages, and a narrowed page is
        // never served to a caller who needs the full scan or other prefixes.
        key: key('listResources', {
          position: page.position ?? null,
          limit: page.limit,
          ...(page.prefixes === undefined ? {} : { prefixes: page.prefixes }),
        }),
        cacheable: ttlMs.list > 0,
        ttlMs: () => ttlMs.list,
        crossReplica: true,
        signal,
        fetch: (shared) => inner.listResources(page, shared),
      });
      // A cached page is only as fresh as the ttlMs it has left: the merged
      // page's ttlMs must not restart the clock (issue 4, "honors ttlMs").
      return stored.ttlMs === undefined ? stored.value : { ...stored.value, ttlMs: stored.ttlMs };
    },
    async listTemplates(signal) {
      const { value } = await cache.getOrFetch({
        tenantId,
        key: key('listTemplates', null),
        cacheable: ttlMs.list > 0,
        ttlMs: () => ttlMs.list,
        crossReplica: true,
        signal,
        fetch: (shared) => inner.listTemplates(shared),
      });
      return value;
    },
    owns: (uri) => inner.owns(uri),
    read: (uri, signal, visible) => inner.read(uri, signal, visible),
    ...(inner.watch === undefined ? {} : { watch: (listener) => inner.watch!(listener) }),
    health: (signal) => inner.health(signal),
    async close() {
      stopWatching?.();
      await inner.close();
    },
  };
}

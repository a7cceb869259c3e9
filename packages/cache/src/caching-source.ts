import type { Logger, Source, SourceChange, SourceTtlMs } from '@mcpgw/core';
import { errorSummary, silentLogger } from '@mcpgw/core';
import type { GatewayCache } from './gateway-cache.js';

export interface SourceCacheContext {
  tenantId: string;
  /** The configuration revision of the runtime this source belongs to: keys its pages (see EntryKeyParts.revision). */
  revision?: number;
  cache: GatewayCache;
  /** Per-source overrides from configuration (`ttlMs` on a source entry); the rest keeps the source's own. */
  ttlMs?: Partial<SourceTtlMs> | undefined;
  logger?: Logger;
}

/**
 * The per-source catalog cache: what the backend returned for a
 * page (`listResources` at a position, limit and narrowing) and its templates, shared
 * by every caller of the tenant. The catalog filters by the caller's scope
 * after this, so an entry never depends on who asked, except for a source
 * that lists under each caller's backend identity (`Source.backendIdentity`):
 * its pages are keyed by that identity too. Concurrent identical
 * misses make one backend call: within a replica through a promise map, and
 * across replicas through a short Redis lock the others wait on.
 *
 * Reads are not cached here (the per-credential layer caches finished read
 * results). A change reported by the source's `watch` invalidates the
 * tenant's entries on every replica, and reaches this source's own `watch`
 * listeners only once that invalidation is done: whoever is told "changed"
 * (a live notification) and asks again gets the new answer, not the cached one.
 */
export function createCachingSource(inner: Source, context: SourceCacheContext): Source {
  const { tenantId, cache } = context;
  const revision = context.revision ?? 0;
  const logger = context.logger ?? silentLogger;
  const ttlMs: SourceTtlMs = { ...inner.ttlMs, ...context.ttlMs };
  const key = (method: string, params: unknown) => ({ layer: 'source' as const, who: inner.id, method, params });
  const changes = inner.watch === undefined ? undefined : invalidatingFeed(inner, context, logger);

  return {
    id: inner.id,
    kind: inner.kind,
    ttlMs,
    async listResources(page, signal) {
      const stored = await cache.getOrFetch({
        tenantId,
        revision,
        // Keyed by what the backend is asked, narrowing included:
        // callers with the same grants share pages, and a narrowed page is
        // never served to a caller who needs the full scan or other prefixes.
        key: key('listResources', {
          position: page.position ?? null,
          limit: page.limit,
          ...(page.prefixes === undefined ? {} : { prefixes: page.prefixes }),
          ...(page.ranges === undefined ? {} : { ranges: page.ranges }),
          // A page filtered by the caller's view is shared by that view only.
          ...(page.visible === undefined ? {} : { view: page.view ?? null }),
          // A page listed under the caller's backend identity is shared by that identity only.
          ...(inner.backendIdentity === undefined ? {} : { identity: inner.backendIdentity(page.caller).key }),
        }),
        cacheable: ttlMs.list > 0 && (page.visible === undefined || page.view !== undefined),
        ttlMs: () => ttlMs.list,
        crossReplica: true,
        signal,
        fetch: (shared) => inner.listResources(page, shared),
      });
      // A cached page is only as fresh as the ttlMs it has left: the merged
      // page's ttlMs must not restart the clock.
      return stored.ttlMs === undefined ? stored.value : { ...stored.value, ttlMs: stored.ttlMs };
    },
    async listTemplates(signal) {
      const { value } = await cache.getOrFetch({
        tenantId,
        revision,
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
    read: (uri, signal, visible, caller) => inner.read(uri, signal, visible, caller),
    ...(inner.backendIdentity === undefined ? {} : { backendIdentity: (caller) => inner.backendIdentity!(caller) }),
    ...(changes === undefined ? {} : { watch: changes.watch, settled: changes.settled }),
    health: (signal) => inner.health(signal),
    async close() {
      changes?.stop();
      await inner.close();
    },
  };
}

/**
 * The source's change feed, watched for the cache's sake from creation on:
 * each burst of changes invalidates the tenant once (what arrives while an
 * invalidation is in flight waits for the next one), then is handed to the
 * listeners in the order the source reported it.
 */
function invalidatingFeed(inner: Source, context: SourceCacheContext, logger: Logger) {
  const listeners = new Set<(change: SourceChange) => void>();
  let batch: SourceChange[] = [];
  let flushing: Promise<void> | undefined;
  const flush = async () => {
    while (batch.length > 0) {
      const changes = batch;
      batch = [];
      await context.cache.invalidateTenant(context.tenantId).catch((error: unknown) => {
        logger.warn({ err: errorSummary(error) }, 'cache invalidation after a source change failed');
      });
      for (const change of changes) {
        for (const listener of [...listeners]) {
          try {
            listener(change);
          } catch (error) {
            logger.error({ err: errorSummary(error), sourceId: inner.id }, 'change listener threw');
          }
        }
      }
    }
    flushing = undefined;
  };
  const stopInner = inner.watch!((change) => {
    batch.push(change);
    // Started once the source's current callback returns: what it reports in one go is one invalidation.
    flushing ??= Promise.resolve().then(flush);
  });
  return {
    /** Stops watching; changes not handed on yet are dropped with the listeners (the source is closing). */
    stop() {
      stopInner();
      listeners.clear();
      batch = [];
    },
    watch(listener: (change: SourceChange) => void): () => void {
      // A wrapper per subscription, so the same function subscribed twice is two subscriptions.
      const entry = (change: SourceChange) => listener(change);
      listeners.add(entry);
      return () => void listeners.delete(entry);
    },
    /** Detection settled, and every change it reported handed on. */
    async settled(): Promise<void> {
      do {
        await inner.settled?.();
        await flushing;
      } while (flushing !== undefined);
    },
  };
}

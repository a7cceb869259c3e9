import type { GatewayCache } from '@mcpgw/cache';
import type { RequestTracing } from './request-tracing.js';

/** The contract's name for each cache layer: a source's backend pages are the `catalog` layer. */
const LAYER = { source: 'catalog', result: 'result' } as const;

/**
 * The cache with each `getOrFetch` traced as a child span of the request
 * (`cache catalog`, or `cache result` for a caller's finished result); a backend call made on a miss nests
 * under it. Everything else is the cache itself (prototype delegation keeps
 * its getters live).
 */
export function traceCache(cache: GatewayCache, tracing: RequestTracing): GatewayCache {
  const getOrFetch: GatewayCache['getOrFetch'] = (call) => {
    const layer = LAYER[call.key.layer];
    return tracing.inSpan(
      `cache ${layer}`,
      { 'mcpgw.cache.layer': layer, 'mcpgw.cache.cacheable': call.cacheable },
      () => cache.getOrFetch(call),
      (result) => ({ 'mcpgw.cache.hit': result.ttlMs !== undefined }),
    );
  };
  // Finished results go through getOrFetchResult (bodies shared between callers with one view).
  const getOrFetchResult: GatewayCache['getOrFetchResult'] = (call) =>
    tracing.inSpan(
      'cache result',
      { 'mcpgw.cache.layer': 'result', 'mcpgw.cache.cacheable': call.cacheable },
      () => cache.getOrFetchResult(call),
      (result) => ({ 'mcpgw.cache.hit': result.ttlMs !== undefined }),
    );
  return Object.create(cache, {
    getOrFetch: { value: getOrFetch },
    getOrFetchResult: { value: getOrFetchResult },
  }) as GatewayCache;
}

import type { GatewayCache } from '@mcpgw/cache';
import type { RequestTracing } from './request-tracing.js';

/** The contract's name for each cache layer: a source's backend pages are the `catalog` layer. */
const LAYER = { source: 'catalog', result: 'result' } as const;

/**
 * The cache with each lookup traced as a child span of the request
 * (`cache catalog`, or `cache result` for a caller's finished result); a backend call made on a miss nests
 * under it. Everything else is the cache itself (prototype delegation keeps
 * its getters live).
 */
export function traceCache(cache: GatewayCache, tracing: RequestTracing): GatewayCache {
  const lookup: GatewayCache['lookup'] = (call) => {
    const layer = LAYER[call.key.layer];
    return tracing.inSpan(
      `cache ${layer}`,
      { 'mcpgw.cache.layer': layer, 'mcpgw.cache.cacheable': call.cacheable },
      () => cache.lookup(call),
      (result) => ({ 'mcpgw.cache.hit': result.remainingMs !== undefined }),
    );
  };
  // Finished results go through lookupResult (bodies shared between callers with one view).
  const lookupResult: GatewayCache['lookupResult'] = (call) =>
    tracing.inSpan(
      'cache result',
      { 'mcpgw.cache.layer': 'result', 'mcpgw.cache.cacheable': call.cacheable },
      () => cache.lookupResult(call),
      (result) => ({ 'mcpgw.cache.hit': result.remainingMs !== undefined }),
    );
  return Object.create(cache, { lookup: { value: lookup }, lookupResult: { value: lookupResult } }) as GatewayCache;
}

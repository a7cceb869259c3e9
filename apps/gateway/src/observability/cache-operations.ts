import type { TenantCacheMetrics } from '@mcpgw/cache';
import type { CacheLayerLabel, CacheResultLabel } from './gateway-metrics.js';

const LAYERS = [
  ['source', 'catalog'],
  ['result', 'result'],
] as const satisfies ReadonlyArray<readonly [keyof TenantCacheMetrics, CacheLayerLabel]>;
const RESULTS = [
  ['hits', 'hit'],
  ['misses', 'miss'],
  ['errors', 'error'],
  ['bypasses', 'bypass'],
] as const satisfies ReadonlyArray<readonly [keyof TenantCacheMetrics['result'], CacheResultLabel]>;

/**
 * The cache's per-tenant counters summed into the contract's
 * `mcpgw_cache_operations_total{layer,result}` (no tenant label: the cache
 * panels are per replica), every combination present, zeros included.
 */
export function cacheOperations(
  perTenant: Record<string, TenantCacheMetrics>,
): Array<{ layer: CacheLayerLabel; result: CacheResultLabel; count: number }> {
  const tenants = Object.values(perTenant);
  return LAYERS.flatMap(([layer, layerLabel]) =>
    RESULTS.map(([counter, result]) => ({
      layer: layerLabel,
      result,
      count: tenants.reduce((sum, tenant) => sum + tenant[layer][counter], 0),
    })),
  );
}

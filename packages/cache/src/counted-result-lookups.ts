import type { GatewayCache } from './gateway-cache.js';
import type { TenantTraffic } from './tenant-traffic.js';

/**
 * The cache with each cacheable lookup of a caller's finished result counted
 * in the tenant's traffic as a hit or a miss (the console's cache hit ratio).
 * Everything else is the cache itself (prototype delegation keeps its getters live).
 */
export function countResultLookups(cache: GatewayCache, traffic: TenantTraffic): GatewayCache {
  const getOrFetchResult: GatewayCache['getOrFetchResult'] = async (call) => {
    const result = await cache.getOrFetchResult(call);
    if (call.cacheable) traffic.recordCacheLookup(call.tenantId, result.ttlMs !== undefined);
    return result;
  };
  return Object.create(cache, { getOrFetchResult: { value: getOrFetchResult } }) as GatewayCache;
}

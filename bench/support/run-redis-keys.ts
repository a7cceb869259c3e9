/**
 * Removes what a bench run left in Redis for its tenants: every key under
 * each tenant's keyed tag and its rate-limit counters, which name the tenant
 * by the same tag (never its id). `secretsKey`: the run gateway's SECRETS_KEY,
 * from which the tag's key derives. Resolves to how many keys went.
 */
import { createCacheKeys } from '@mcpgw/cache';
import { createServerKeys } from '@mcpgw/core';
import { inspector } from '@mcpgw/test-helpers/redis';

export async function deleteRunKeys(secretsKey: string | undefined, tenantIds: readonly string[]): Promise<number> {
  if (secretsKey === undefined) return 0;
  const keys = createCacheKeys({ key: createServerKeys({ secretsKey }).cacheKey });
  const redis = inspector();
  await redis.connect();
  let deleted = 0;
  try {
    const patterns = tenantIds.flatMap((id) => [`*{${keys.tenantTag(id)}}*`, `mcpgw:rl:*${keys.tenantTag(id)}*`]);
    for (const pattern of patterns) {
      let cursor = '0';
      do {
        const [next, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        if (found.length > 0) deleted += await redis.unlink(...found);
      } while (cursor !== '0');
    }
  } finally {
    redis.disconnect();
  }
  return deleted;
}

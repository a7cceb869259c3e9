import type { CacheStore } from './cache-store.js';
import type { RedisConnection, RedisConnectionOptions } from './redis-connection.js';
import { openRedisConnection } from './redis-connection.js';

/** A connection the caller owns (shared with the process's other Redis users), or the options to open one of its own. */
export type RedisStoreConnection = RedisConnection | RedisConnectionOptions;

/** `raise`: keeps the larger of the stored integer and ARGV[1], in one step. */
const RAISE_SCRIPT = `
local current = tonumber(redis.call('GET', KEYS[1]))
if current ~= nil and current >= tonumber(ARGV[1]) then return tostring(current) end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ARGV[1]
`;

/**
 * The Redis store, on the process's Redis connection: its commands fail fast
 * instead of waiting (no offline queue, the connection's command deadline, no
 * per-request retries; auto-pipelining) and reconnection continues in the
 * background. Invalidation messages travel on the replica bus, not here.
 * Given options instead of a connection, it opens one and closes it with itself.
 */
export function createRedisStore(redis: RedisStoreConnection): CacheStore {
  const owned = !('client' in redis);
  const connection = 'client' in redis ? redis : openRedisConnection(redis);
  const { client } = connection;

  return {
    kind: 'redis',
    async get(key) {
      return (await client.get(key)) ?? undefined;
    },
    async getMany(keys) {
      if (keys.length === 0) return [];
      return (await client.mget(...keys)).map((value) => value ?? undefined);
    },
    async set(key, value, ttlMs) {
      await client.set(key, value, 'PX', ttlMs);
    },
    async setIfAbsent(key, value, ttlMs) {
      return (await client.set(key, value, 'PX', ttlMs, 'NX')) === 'OK';
    },
    async delete(key) {
      await client.del(key);
    },
    async raise(key, value, ttlMs) {
      return Number(await client.eval(RAISE_SCRIPT, 1, key, String(value), String(ttlMs)));
    },
    async deleteByPrefix(prefix) {
      const match = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
      // A cluster keeps the prefix's slot on one master, but which one is not worth asking: scan them all.
      const nodes = connection.masters();
      let deleted = 0;
      for (const node of nodes) {
        let cursor = '0';
        do {
          const [next, keys] = await node.scan(cursor, 'MATCH', match, 'COUNT', 1000);
          cursor = next;
          if (keys.length > 0) deleted += await node.unlink(...keys);
        } while (cursor !== '0');
      }
      return deleted;
    },
    ready: (timeoutMs) => connection.ready(timeoutMs),
    async ping() {
      await client.ping();
    },
    async close() {
      if (owned) await connection.close();
    },
  };
}

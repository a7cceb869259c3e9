import type { RedisConnection, RedisConnectionOptions } from './redis-connection.js';
import { openRedisConnection } from './redis-connection.js';

/** One fixed window's count after an increment, and how long until it resets. */
export interface WindowCount {
  current: number;
  ttlMs: number;
}

/**
 * Fixed-window request counters for rate limits. Keys are built by the caller
 * and hold the tenant (and a keyed principal fingerprint), never a token.
 */
export interface RateCounter {
  /**
   * Counts one request (or `by` of them) against `key` in a window of `windowMs`; `limit`, what the
   * caller compares the count with, lets a batching counter (batchRateCounter) answer from its own tally.
   */
  increment(key: string, windowMs: number, by?: number, limit?: number): Promise<WindowCount>;
  /** Drops the counters named `keys` and those starting with any of `prefixes` (a deleted tenant's). */
  forget(keys: readonly string[], prefixes: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

export interface MemoryRateCounterOptions {
  /** Keys kept at most; the oldest windows go first. Default 10,000. */
  maxKeys?: number;
  now?: () => number;
}

/** Counters in this process: exact for one replica, per replica for several. */
export function createMemoryRateCounter(options: MemoryRateCounterOptions = {}): RateCounter {
  const maxKeys = options.maxKeys ?? 10_000;
  const now = options.now ?? Date.now;
  const windows = new Map<string, { current: number; resetAt: number }>();
  return {
    async increment(key, windowMs, by = 1) {
      const at = now();
      let window = windows.get(key);
      if (window === undefined || window.resetAt <= at) {
        windows.delete(key);
        window = { current: 0, resetAt: at + windowMs };
        // Insertion order is age order: evicting the first keys drops the oldest windows.
        for (const oldest of windows.keys()) {
          if (windows.size < maxKeys) break;
          windows.delete(oldest);
        }
        windows.set(key, window);
      }
      window.current += by;
      return { current: window.current, ttlMs: window.resetAt - at };
    },
    async forget(keys, prefixes) {
      for (const key of [...windows.keys()]) {
        if (keys.includes(key) || prefixes.some((prefix) => key.startsWith(prefix))) windows.delete(key);
      }
    },
    async close() {
      windows.clear();
    },
  };
}

// INCRBY and PEXPIRE in one script, so a counter never outlives its window (a
// crash between the two commands would leave a key without expiry).
const INCREMENT_SCRIPT = `
local current = redis.call('INCRBY', KEYS[1], ARGV[2])
if current == tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {current, ttl}
`;

export interface RedisRateCounterOptions {
  /** The process's Redis connection (the caller closes it), or the options to open one of its own. */
  redis: RedisConnection | RedisConnectionOptions;
  /** Key prefix, e.g. `mcpgw:rl:`; tests use their own namespace. */
  prefix: string;
}

/** The Redis counter, and a way to wait for its first connection at start. */
export interface RedisRateCounter extends RateCounter {
  /** Resolves true once connected, false after `timeoutMs` without a connection. */
  ready(timeoutMs: number): Promise<boolean>;
}

interface ScriptClient {
  rateCount(key: string, windowMs: number, by: number): Promise<[number, number]>;
}

/**
 * Counters shared by every replica through Redis. On the process's Redis
 * connection it fails fast instead of waiting (no offline queue, a command
 * deadline, no retries: ioredis would otherwise queue commands while Redis
 * is down): a rejected `increment` tells the caller to count in process
 * instead (see `withFallbackCounter`).
 */
export function createRedisRateCounter(options: RedisRateCounterOptions): RedisRateCounter {
  const owned = !('client' in options.redis);
  const connection = 'client' in options.redis ? options.redis : openRedisConnection(options.redis);
  const { client } = connection;
  // Defining it again on a shared client (a second counter) replaces it with the same script.
  client.defineCommand('rateCount', { numberOfKeys: 1, lua: INCREMENT_SCRIPT });
  const scripts = client as unknown as ScriptClient;
  return {
    async increment(key, windowMs, by = 1) {
      const [current, ttlMs] = await scripts.rateCount(options.prefix + key, windowMs, by);
      return { current, ttlMs };
    },
    async forget(keys, prefixes) {
      // One key per command: counters carry no hash tag, so on a cluster any two may live in different slots.
      await Promise.all(keys.map((key) => client.unlink(options.prefix + key)));
      const nodes = connection.masters();
      for (const prefix of prefixes) {
        const match = `${(options.prefix + prefix).replace(/[*?[\]\\]/g, '\\$&')}*`;
        for (const node of nodes) {
          let cursor = '0';
          do {
            const [next, found] = await node.scan(cursor, 'MATCH', match, 'COUNT', 1000);
            cursor = next;
            await Promise.all(found.map((key) => node.unlink(key)));
          } while (cursor !== '0');
        }
      }
    },
    ready: (timeoutMs) => connection.ready(timeoutMs),
    async close() {
      if (owned) await connection.close();
    },
  };
}

/**
 * Counts in `primary` (Redis) and, whenever it fails, in `fallback` (this
 * process) instead: a Redis outage loosens limits to per-replica counting
 * but never fails a request.
 */
export function withFallbackCounter(
  primary: RateCounter,
  fallback: RateCounter,
  onFallback: (error: unknown) => void = () => undefined,
): RateCounter {
  return {
    async increment(key, windowMs, by, limit) {
      try {
        return await primary.increment(key, windowMs, by, limit);
      } catch (error) {
        onFallback(error);
        return fallback.increment(key, windowMs, by);
      }
    },
    async forget(keys, prefixes) {
      await Promise.all([primary.forget(keys, prefixes), fallback.forget(keys, prefixes)]);
    },
    async close() {
      await Promise.all([primary.close(), fallback.close()]);
    },
  };
}

/**
 * The one small storage interface both cache layers use. Values are strings
 * (serialized MCP results); every key is built by `createCacheKeys`, so a
 * store never sees a tenant id, a principal or a URI in clear.
 *
 * Every method may reject (Redis down, slow or the circuit open): callers
 * treat any rejection as "no cache" and serve the request uncached.
 */
export interface CacheStore {
  readonly kind: 'memory' | 'redis';
  get(key: string): Promise<string | undefined>;
  /**
   * Several values at once. All keys must belong to one tenant (they share a
   * hash tag, so this is one slot on Redis Cluster).
   */
  getMany(keys: readonly string[]): Promise<Array<string | undefined>>;
  /** Stores `value` for `ttlMs` milliseconds (an integer >= 1). */
  set(key: string, value: string, ttlMs: number): Promise<void>;
  /** Stores only when the key is absent (Redis `SET NX PX`); true when stored. */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  delete(key: string): Promise<void>;
  /**
   * Raises the integer at `key` to `value` if it is lower or absent (Redis:
   * one Lua call, so concurrent raises never lower it) and keeps it `ttlMs`;
   * resolves to the value now stored.
   */
  raise(key: string, value: number, ttlMs: number): Promise<number>;
  /** Deletes every key starting with `prefix` (one tenant's keys: a hash tag, so one slot); resolves to how many. */
  deleteByPrefix(prefix: string): Promise<number>;
  /** Resolves true once connected (at once for the in-process store), false after `timeoutMs`. */
  ready(timeoutMs: number): Promise<boolean>;
  /** A cheap round trip, used by the circuit breaker's background probe. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

import { RecencyMap } from '@mcpgw/core';
import type { CacheStore } from './cache-store.js';

export interface MemoryStoreOptions {
  /** Most entries kept; the least recently used go first. Default 10,000. */
  maxEntries?: number;
  /** Most bytes kept (keys plus values, counted as UTF-16 code units x 2). Default 64 MiB. */
  maxBytes?: number;
  /** Clock for expiry; tests pass a fake one. */
  now?: () => number;
}

interface Entry {
  value: string;
  expiresAt: number;
  bytes: number;
}

/**
 * The in-process store used when REDIS_URL is unset: bounded by entry count
 * and bytes, the least recently used evicted first, with a TTL per entry. A
 * RecencyMap keeps the order without moving an entry on each hit (see there
 * why that matters on the hot path). It is this replica's own: invalidations
 * between replicas travel on the replica bus (TenantGenerations).
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): CacheStore {
  const maxEntries = options.maxEntries ?? 10_000;
  const maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
  const now = options.now ?? Date.now;
  const entries = new RecencyMap<string, Entry>();
  let bytes = 0;

  const remove = (key: string) => {
    const entry = entries.peek(key);
    if (entry === undefined) return;
    entries.delete(key);
    bytes -= entry.bytes;
  };
  /** The entry, unless it has expired (then it is removed); `use` marks it as used. */
  const live = (key: string, use: boolean): Entry | undefined => {
    const entry = use ? entries.get(key) : entries.peek(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= now()) {
      remove(key);
      return undefined;
    }
    return entry;
  };
  const get = (key: string): string | undefined => live(key, true)?.value;
  const put = (key: string, value: string, ttlMs: number) => {
    remove(key);
    const size = (key.length + value.length) * 2;
    // An entry larger than the whole budget would only evict everything else.
    if (size > maxBytes || ttlMs <= 0) return;
    entries.set(key, { value, expiresAt: now() + ttlMs, bytes: size });
    bytes += size;
    while (entries.size > maxEntries || bytes > maxBytes) {
      const evicted = entries.evict();
      if (evicted === undefined) break;
      bytes -= evicted[1].bytes;
    }
  };

  return {
    kind: 'memory',
    async get(key) {
      return get(key);
    },
    async getMany(keys) {
      return keys.map(get);
    },
    async set(key, value, ttlMs) {
      put(key, value, ttlMs);
    },
    async setIfAbsent(key, value, ttlMs) {
      if (live(key, false) !== undefined) return false;
      put(key, value, ttlMs);
      return true;
    },
    async delete(key) {
      remove(key);
    },
    async raise(key, value, ttlMs) {
      const current = Number(live(key, false)?.value ?? Number.NEGATIVE_INFINITY);
      if (current >= value) return current;
      put(key, String(value), ttlMs);
      return value;
    },
    async deleteByPrefix(prefix) {
      const doomed = [...entries.keys()].filter((key) => key.startsWith(prefix));
      for (const key of doomed) remove(key);
      return doomed.length;
    },
    async ready() {
      return true;
    },
    async ping() {},
    async close() {
      entries.clear();
      bytes = 0;
    },
  };
}

import { RecencyMap } from '@mcpgw/core';

/** What an entry of the result cache holds: when its body was fetched, for how long it is fresh, and which body. */
export interface EntryRecord {
  at: number;
  ttl: number;
  /** The body's content address (`CacheKeys.bodyMac`). */
  b: string;
}

/** Records kept in process: about 300 bytes each with their keys, so at most about 15 MB. */
const RECORD_MEMO_ENTRIES = 50_000;

/** The result cache's entry records kept in process until they end (see createEntryRecordMemo). */
export interface EntryRecordMemo {
  /** The record stored under `key`, while it is fresh. */
  get(key: string): EntryRecord | undefined;
  /** Keeps the record that `key` holds in the store (just read, or just written). */
  remember(key: string, record: EntryRecord): void;
  /** Drops every record whose key starts with `prefix` (one tenant's). */
  forget(prefix: string): void;
}

/**
 * A copy, in process, of the entry records this replica read from or wrote
 * to the shared store, each until the moment it ends there (`at + ttl`).
 *
 * Serving a hit from this copy instead of reading the record again is
 * exact, not an approximation: an entry key folds in the tenant's generation
 * and the runtime's configuration revision (cache-keys.ts), and the store
 * never changes or deletes one entry on its own: invalidation starts a new
 * generation (tenant-generations.ts), which this replica learns over the
 * replica bus and which makes every older key, here and in the store,
 * unreachable at once. Until its end the store answers for a key what this
 * copy holds (a concurrent writer of the same key writes a record of the
 * same generation, equally fresh), and after it neither answers anything.
 * So a cached request costs no round trip to Redis; "the result MAY be
 * cached for `ttlMs`" (2026-07-28 server/utilities/caching) is honoured to
 * the millisecond either way.
 */
export function createEntryRecordMemo(now: () => number, limit = RECORD_MEMO_ENTRIES): EntryRecordMemo {
  const records = new RecencyMap<string, EntryRecord>();
  return {
    get(key) {
      const record = records.get(key);
      if (record === undefined) return undefined;
      if (record.at + record.ttl > now()) return record;
      records.delete(key);
      return undefined;
    },
    remember(key, record) {
      if (!(record.at + record.ttl > now())) return;
      records.set(key, record);
      while (records.size > limit && records.evict() !== undefined);
    },
    forget(prefix) {
      for (const key of [...records.keys()]) if (key.startsWith(prefix)) records.delete(key);
    },
  };
}

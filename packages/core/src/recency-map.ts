/**
 * A Map for bounded caches that evicts the least recently used entries, or
 * near enough, without moving an entry on every hit.
 *
 * The usual JavaScript LRU deletes and re-inserts a key on each hit, so that
 * the Map's insertion order is the recency order. On a long-lived Map that is
 * costly where it does not show: V8 keeps a Map's entries in a hash table that
 * a delete only marks, and rebuilds the table once enough slots are used up,
 * allocating the new one next to the old, in the old generation. A cache hit
 * per request then turns into old-generation garbage per request, which only
 * the full (mark-compact) collector reclaims; the gateway's cached listing did
 * three such touches per request (the token, the cache entry, the cursor).
 *
 * Here a hit only marks its entry. Eviction takes entries from the front (the
 * oldest insertion); a marked one gets a second chance instead: unmarked and
 * moved to the back. This is the "second chance" (CLOCK) approximation of LRU
 * (Corbató, 1968): an entry used since it was last considered is not evicted.
 * Keys and entries move only when something has to be evicted.
 */
export class RecencyMap<K, V> {
  readonly #entries = new Map<K, { value: V; used: boolean }>();
  /** The key stored last: never the one evicted to make room for it. */
  #newest: K | undefined;

  /** The value for `key`, marking it as used. */
  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    entry.used = true;
    return entry.value;
  }

  /** The value for `key`, without marking it (a look that does not count as a use). */
  peek(key: K): V | undefined {
    return this.#entries.get(key)?.value;
  }

  /** Stores `value`; a new key goes to the back, a known one keeps its place and counts as used. */
  set(key: K, value: V): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) {
      this.#entries.set(key, { value, used: false });
      this.#newest = key;
    } else {
      entry.value = value;
      entry.used = true;
    }
  }

  delete(key: K): boolean {
    return this.#entries.delete(key);
  }

  /**
   * Removes and returns the entry to evict: the oldest not used since it was
   * last considered, other than the one stored last (when every older entry
   * was used, a newcomer would otherwise be the first to go). Used entries
   * passed over are unmarked and moved to the back, so this ends within one
   * pass. Undefined when nothing but the newest entry is left.
   */
  evict(): [key: K, value: V] | undefined {
    if (this.#entries.size <= 1 && this.#entries.has(this.#newest as K)) return undefined;
    for (;;) {
      const oldest = this.#entries.entries().next();
      if (oldest.done === true) return undefined;
      const [key, entry] = oldest.value;
      this.#entries.delete(key);
      if (!entry.used && key !== this.#newest) return [key, entry.value];
      entry.used = false;
      this.#entries.set(key, entry);
    }
  }

  /** Every key, oldest insertion first (for sweeps that delete by a pattern). */
  keys(): IterableIterator<K> {
    return this.#entries.keys();
  }

  clear(): void {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }
}

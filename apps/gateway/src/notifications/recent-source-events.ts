import { createHash } from 'node:crypto';
import type { TenantEvent } from './tenant-events.js';

/**
 * Every replica with listeners runs the same change detection (each polls
 * S3, hears Postgres, watches its files) and publishes what it notices, so
 * one change reaches a replica once from each detector. This remembers, for a
 * short window, which replica's copy of a `source` event was delivered here,
 * and drops an identical one from ANOTHER replica within the window. An
 * identical event from the SAME replica is always delivered: one detector
 * reports one change once, so a repeat from it is a new change.
 */
export class RecentSourceEvents {
  readonly #seen = new Map<string, { readonly origin: string; readonly at: number }>();
  readonly #windowMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(windowMs: number, maxEntries = 10_000, now: () => number = Date.now) {
    this.#windowMs = windowMs;
    this.#maxEntries = maxEntries;
    this.#now = now;
  }

  /** Whether `event` from `origin` should reach this replica's listeners (and remembers it if so). */
  admit(event: TenantEvent, origin: string): boolean {
    if (event.type !== 'source' || this.#windowMs <= 0) return true;
    // The whole change, hashed: two list changes naming different resources are two changes.
    const change = event.change;
    const named = change.type === 'list-changed' ? change.uris : [change.uri, change.because ?? null];
    const key = createHash('sha256')
      .update(JSON.stringify([event.tenantId, event.sourceId, change.type, named]))
      .digest('base64url');
    const now = this.#now();
    const previous = this.#seen.get(key);
    if (previous !== undefined && previous.origin !== origin && now - previous.at < this.#windowMs) return false;
    // Re-inserted, so the map stays ordered oldest first and pruning stops at the first live entry.
    this.#seen.delete(key);
    this.#seen.set(key, { origin, at: now });
    if (this.#seen.size > this.#maxEntries) this.#prune(now);
    return true;
  }

  #prune(now: number): void {
    for (const [key, entry] of this.#seen) {
      if (now - entry.at < this.#windowMs && this.#seen.size <= this.#maxEntries) return;
      this.#seen.delete(key);
    }
  }
}

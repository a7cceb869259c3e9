import type { Principal } from '@mcpgw/core';
import { hash as digest } from 'node:crypto';

/** Default bound on verified tokens remembered per verifier. */
export const DEFAULT_TOKEN_CACHE_SIZE = 10_000;

/**
 * The cache key of a token: its SHA-256, so the raw token is never stored
 * (issue 3: "A verified token may be cached by a hash of it").
 */
export function tokenHash(token: string): string {
  // The one-shot form: the same digest without a Hash object per request.
  return digest('sha256', token, 'base64url');
}

/**
 * Verified Principals by token hash until an expiry instant, bounded LRU
 * (a Map keeps insertion order: the first key is the least recently used).
 */
export class TokenCache {
  readonly #entries = new Map<string, { principal: Principal; until: number }>();
  readonly #maxEntries: number;

  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

  get(hash: string, now: number): Principal | undefined {
    const entry = this.#entries.get(hash);
    if (entry === undefined) return undefined;
    this.#entries.delete(hash);
    if (entry.until <= now) return undefined;
    this.#entries.set(hash, entry);
    return entry.principal;
  }

  /** Remembers `principal` while `now < until` (milliseconds). */
  set(hash: string, principal: Principal, until: number, now: number): void {
    if (this.#maxEntries <= 0 || until <= now) return;
    this.#entries.delete(hash);
    this.#entries.set(hash, { principal, until });
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done === true) break;
      this.#entries.delete(oldest.value);
    }
  }

  get size(): number {
    return this.#entries.size;
  }

  clear(): void {
    this.#entries.clear();
  }
}

import type { Principal } from '@mcpgw/core';
import { RecencyMap } from '@mcpgw/core';
import { hash as digest } from 'node:crypto';

/** Default bound on verified tokens remembered per verifier. */
export const DEFAULT_TOKEN_CACHE_SIZE = 10_000;

/**
 * The cache key of a token: its SHA-256, so the raw token is never stored
 * and a leaked cache reveals no usable credential.
 */
export function tokenHash(token: string): string {
  // The one-shot form: the same digest without a Hash object per request.
  return digest('sha256', token, 'base64url');
}

/**
 * Verified Principals by token hash until an expiry instant, bounded to
 * `maxEntries` with the least recently used evicted first (a RecencyMap: a
 * hit, once per request, moves nothing).
 */
export class TokenCache {
  readonly #entries = new RecencyMap<string, { principal: Principal; until: number }>();
  readonly #maxEntries: number;

  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

  get(hash: string, now: number): Principal | undefined {
    const entry = this.#entries.get(hash);
    if (entry === undefined) return undefined;
    if (entry.until > now) return entry.principal;
    this.#entries.delete(hash);
    return undefined;
  }

  /** Remembers `principal` while `now < until` (milliseconds). */
  set(hash: string, principal: Principal, until: number, now: number): void {
    if (this.#maxEntries <= 0 || until <= now) return;
    this.#entries.set(hash, { principal, until });
    while (this.#entries.size > this.#maxEntries) this.#entries.evict();
  }

  get size(): number {
    return this.#entries.size;
  }

  clear(): void {
    this.#entries.clear();
  }
}

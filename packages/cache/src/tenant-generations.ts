import { randomBytes } from 'node:crypto';
import type { CacheKeys } from './cache-keys.js';
import type { CacheStore } from './cache-store.js';

/** A generation outlives any entry; if Redis drops it, a new one just empties the tenant's cache once. */
const GENERATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export interface TenantGenerationsOptions {
  /** How long a replica trusts its copy without re-reading Redis, in case a pub/sub message was lost. Default 500 ms. */
  refreshMs?: number;
  now?: () => number;
}

/**
 * Invalidation by key versioning (issue 4): every entry key folds in the
 * tenant's current generation, a random string kept in the store. Replacing
 * it makes all of the tenant's entries unreachable at once (they expire on
 * their own). Each replica keeps a copy for at most `refreshMs` and drops it
 * at once when the pub/sub channel announces a new generation, so every
 * replica sees an invalidation within about a millisecond, and within
 * `refreshMs` even if the message is lost.
 */
export class TenantGenerations {
  private readonly local = new Map<string, { generation: string; loadedAt: number }>();
  private readonly loading = new Map<string, Promise<string>>();
  private readonly refreshMs: number;
  private readonly now: () => number;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly store: CacheStore,
    private readonly keys: CacheKeys,
    options: TenantGenerationsOptions = {},
  ) {
    this.refreshMs = options.refreshMs ?? 500;
    this.now = options.now ?? Date.now;
    this.unsubscribe = store.subscribe(
      keys.invalidationChannel,
      (tag) => this.local.delete(tag),
      () => this.local.clear(),
    );
  }

  /** The tenant's generation; rejects when the store fails (the caller bypasses the cache). */
  current(tenantId: string): Promise<string> {
    const tag = this.keys.tenantTag(tenantId);
    const known = this.local.get(tag);
    if (known !== undefined && this.now() - known.loadedAt < this.refreshMs) return Promise.resolve(known.generation);
    const pending = this.loading.get(tag);
    if (pending !== undefined) return pending;
    const load = this.load(tenantId, tag).finally(() => this.loading.delete(tag));
    this.loading.set(tag, load);
    return load;
  }

  /** Starts a new generation for the tenant and tells every replica. */
  async invalidate(tenantId: string): Promise<void> {
    const tag = this.keys.tenantTag(tenantId);
    // Even if the store fails below, this replica must not keep serving the old generation.
    this.local.delete(tag);
    const generation = randomBytes(12).toString('base64url');
    await this.store.set(this.keys.generation(tenantId), generation, GENERATION_TTL_MS);
    this.local.set(tag, { generation, loadedAt: this.now() });
    await this.store.publish(this.keys.invalidationChannel, tag);
  }

  close(): void {
    this.unsubscribe();
  }

  private async load(tenantId: string, tag: string): Promise<string> {
    const key = this.keys.generation(tenantId);
    let generation = await this.store.get(key);
    if (generation === undefined) {
      // First use (or the key was evicted): replicas race to create it, and all adopt the winner.
      const mine = randomBytes(12).toString('base64url');
      generation = (await this.store.setIfAbsent(key, mine, GENERATION_TTL_MS))
        ? mine
        : ((await this.store.get(key)) ?? mine);
    }
    this.local.set(tag, { generation, loadedAt: this.now() });
    return generation;
  }
}

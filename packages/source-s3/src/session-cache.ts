import { RecencyMap } from '@mcpgw/core';

export interface SessionCacheOptions {
  /** Entries are used until this long before they expire (then fetched again). */
  readonly refreshBeforeMs: number;
  /** Identities kept at once; the least recently used one goes first. */
  readonly maxEntries: number;
  /** Milliseconds since the epoch. */
  readonly now: () => number;
}

/** Values that expire (role session credentials and what was built on them), kept per backend identity. */
export interface SessionCache<T> {
  /**
   * The value for `key`: the cached one while it is fresh, else `load()`'s.
   * Concurrent misses of one key share one load; a failed load is not kept
   * (the next caller of the key loads again) and fails only those who
   * waited on it. `signal` lets one waiter go without cancelling the load
   * the others share.
   */
  get(key: string, load: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  clear(): void;
}

/** A cache of values that say when they expire (`expiresAt`, milliseconds since the epoch). */
export function createSessionCache<T>(expiresAt: (value: T) => number, options: SessionCacheOptions): SessionCache<T> {
  const fresh = new RecencyMap<string, T>();
  const loading = new Map<string, Promise<T>>();

  const usable = (value: T) => options.now() < expiresAt(value) - options.refreshBeforeMs;

  function started(key: string, load: () => Promise<T>): Promise<T> {
    let pending = loading.get(key);
    if (pending !== undefined) return pending;
    pending = load().then(
      (value) => {
        loading.delete(key);
        // A value already inside its refresh margin serves the callers that waited, and no one after them.
        if (usable(value)) {
          fresh.set(key, value);
          while (fresh.size > options.maxEntries && fresh.evict() !== undefined);
        }
        return value;
      },
      (error: unknown) => {
        loading.delete(key);
        throw error;
      },
    );
    loading.set(key, pending);
    return pending;
  }

  return {
    get(key, load, signal) {
      const cached = fresh.get(key);
      if (cached !== undefined && usable(cached)) return Promise.resolve(cached);
      if (cached !== undefined) fresh.delete(key);
      const pending = started(key, load);
      return signal === undefined ? pending : abandonable(pending, signal);
    },
    clear() {
      fresh.clear();
    },
  };
}

/** `promise`, or the signal's reason as soon as it aborts (the promise goes on for others). */
function abandonable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error as Error);
      },
    );
  });
}

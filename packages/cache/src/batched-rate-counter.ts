import type { RateCounter, WindowCount } from './rate-counter.js';

export interface BatchedRateCounterOptions {
  /** How long counts wait in process before they are sent as one increment per key. Default 200 ms. */
  flushMs?: number;
  /** Limits below this are always counted exactly, one shared increment per request. Default 100. */
  minBatchedLimit?: number;
  /** Keys remembered at most; the oldest windows go first (their counts are sent). Default 10,000. */
  maxKeys?: number;
  now?: () => number;
  /** A batch the shared counter refused (kept, and sent with the next). */
  onFlushError?: (error: unknown) => void;
}

/** What this process knows of one key's window. */
interface Tally {
  windowMs: number;
  /** The shared count as of the last answer from the shared counter. */
  base: number;
  /** Counted here since, not sent yet. */
  pending: number;
  resetAt: number;
}

/**
 * A shared counter (Redis) asked once per key and window and then only when
 * it matters: while a key's count, as this process knows it, is below half of
 * the limit it is compared with, a request is counted in process and the
 * counts go out together every `flushMs` (one `INCRBY` per key), and the
 * answer is the shared count last seen plus this process's since. From half
 * the limit on, and for limits below `minBatchedLimit`, every request is sent
 * at once and decided on the shared count, as without batching. So one
 * replica counts exactly; across replicas the others' counts arrive up to
 * `flushMs` late, and only while the key is below half its limit, so a
 * replica can admit more than the limit only when the other replicas send
 * more than half of it within one `flushMs`. Without `limit` (the caller does
 * not say), every request is sent at once.
 */
export function batchRateCounter(
  shared: RateCounter,
  options: BatchedRateCounterOptions = {},
): RateCounter & { flush(): Promise<void> } {
  const flushMs = options.flushMs ?? 200;
  const minBatchedLimit = options.minBatchedLimit ?? 100;
  const maxKeys = options.maxKeys ?? 10_000;
  const now = options.now ?? Date.now;
  const tallies = new Map<string, Tally>();
  const dirty = new Set<string>();
  const inFlight = new Set<Promise<void>>();
  let timer: NodeJS.Timeout | undefined;

  /** The shared counter's answer for `key`, folded into what this process knows. */
  const learn = (key: string, windowMs: number, count: WindowCount, tally: Tally | undefined): void => {
    const at = now();
    const known = tallies.get(key);
    if (known !== undefined && known === tally && known.resetAt > at) {
      known.base = Math.max(known.base, count.current);
      known.resetAt = at + count.ttlMs;
      return;
    }
    if (known !== undefined && known.resetAt > at) return;
    tallies.delete(key);
    tallies.set(key, { windowMs, base: count.current, pending: 0, resetAt: at + count.ttlMs });
    // Insertion order is age order: the oldest windows go first, their counts sent.
    for (const [oldest, old] of tallies) {
      if (tallies.size <= maxKeys) break;
      tallies.delete(oldest);
      dirty.delete(oldest);
      if (old.pending > 0 && old.resetAt > at) send(oldest, old, old.pending);
    }
  };

  const send = (key: string, tally: Tally, by: number): void => {
    const sending = shared.increment(key, tally.windowMs, by).then(
      (count) => learn(key, tally.windowMs, count, tally),
      (error: unknown) => {
        // Sent again with the next batch, while the window lasts.
        if (tallies.get(key) === tally) {
          tally.pending += by;
          dirty.add(key);
          schedule();
        }
        options.onFlushError?.(error);
      },
    );
    const tracked: Promise<void> = sending.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
  };

  const flushNow = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    const at = now();
    for (const key of dirty) {
      const tally = tallies.get(key);
      if (tally === undefined || tally.pending === 0 || tally.resetAt <= at) continue;
      const by = tally.pending;
      tally.pending = 0;
      send(key, tally, by);
    }
    dirty.clear();
  };

  const schedule = (): void => {
    if (timer !== undefined) return;
    timer = setTimeout(flushNow, flushMs);
    timer.unref();
  };

  return {
    async increment(key, windowMs, by = 1, limit) {
      const at = now();
      let tally = tallies.get(key);
      if (tally !== undefined && tally.resetAt <= at) {
        // The window is over: what was not sent belonged to it.
        tallies.delete(key);
        dirty.delete(key);
        tally = undefined;
      }
      const batched =
        tally !== undefined &&
        limit !== undefined &&
        limit >= minBatchedLimit &&
        (tally.base + tally.pending + by) * 2 <= limit;
      if (!batched) {
        // Sent at once, with whatever this process counted for the key before.
        const sent = by + (tally?.pending ?? 0);
        if (tally !== undefined) tally.pending = 0;
        try {
          const count = await shared.increment(key, windowMs, sent);
          learn(key, windowMs, count, tally);
          return count;
        } catch (error) {
          if (tally !== undefined && tallies.get(key) === tally) tally.pending += sent - by;
          throw error;
        }
      }
      tally!.pending += by;
      dirty.add(key);
      schedule();
      return { current: tally!.base + tally!.pending, ttlMs: tally!.resetAt - at };
    },
    async forget(keys, prefixes) {
      for (const key of [...tallies.keys()]) {
        if (keys.includes(key) || prefixes.some((prefix) => key.startsWith(prefix))) {
          tallies.delete(key);
          dirty.delete(key);
        }
      }
      await shared.forget(keys, prefixes);
    },
    /** Sends what is counted and not sent yet, and waits for every send. */
    async flush() {
      flushNow();
      await Promise.all([...inFlight]);
    },
    async close() {
      flushNow();
      await Promise.all([...inFlight]);
      tallies.clear();
      await shared.close();
    },
  };
}

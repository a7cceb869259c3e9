/**
 * Collects the tenant events a listener receives and lets a test wait for
 * the next one that matches, on the event itself (a promise), never on a
 * sleep. The events are structural (`type`, `tenantId`, ...), so this module
 * needs nothing from the gateway.
 */
export interface CollectedEvent {
  readonly type: string;
  readonly tenantId: string;
  readonly [field: string]: unknown;
}

export interface EventCollector<E extends CollectedEvent = CollectedEvent> {
  /** Every event received so far, in order. */
  readonly events: E[];
  /** Pass to `subscribe`. */
  readonly listener: (event: E) => void;
  /**
   * Resolves with the first event at index `from` or later (default: any
   * received so far, or the next to come) that satisfies `match`; rejects
   * after `timeoutMs` naming what did arrive.
   */
  next(match: (event: E) => boolean, timeoutMs?: number, from?: number): Promise<E>;
  /** Forgets what was received. */
  clear(): void;
}

export function collectEvents<E extends CollectedEvent = CollectedEvent>(): EventCollector<E> {
  const events: E[] = [];
  const waiters = new Set<{ match: (event: E) => boolean; resolve: (event: E) => void }>();
  return {
    events,
    listener(event) {
      events.push(event);
      for (const waiter of [...waiters]) {
        if (!waiter.match(event)) continue;
        waiters.delete(waiter);
        waiter.resolve(event);
      }
    },
    next(match, timeoutMs = 5000, from = 0) {
      const already = events.slice(from).find(match);
      if (already !== undefined) return Promise.resolve(already);
      return new Promise<E>((resolve, reject) => {
        const waiter = {
          match,
          resolve: (event: E) => {
            clearTimeout(timer);
            resolve(event);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(
            new Error(`no matching event within ${timeoutMs} ms; received: ${JSON.stringify(events.slice(from))}`),
          );
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    clear() {
      events.length = 0;
    },
  };
}

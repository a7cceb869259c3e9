import type { Logger } from '@mcpgw/core';
import { silentLogger } from '@mcpgw/core';
import type { CacheStore } from './cache-store.js';

/** Thrown without touching Redis while the circuit is open: the request is served uncached (a bypass). */
export class CacheBypassError extends Error {
  constructor() {
    super('cache circuit open');
    this.name = 'CacheBypassError';
  }
}

export interface CircuitBreakerOptions {
  /** Consecutive failed commands that open the circuit. Default 5. */
  failureThreshold?: number;
  /** How often an open circuit probes Redis with PING. Default 500 ms. */
  probeIntervalMs?: number;
  logger?: Logger;
}

export interface BreakerStore extends CacheStore {
  /** `open` while Redis is considered down. */
  readonly state: 'closed' | 'open';
}

/**
 * Stops sending commands to a Redis that keeps failing, so an outage costs
 * requests nothing (not even the 50 ms timeout): after `failureThreshold`
 * consecutive failures every command fails at once with CacheBypassError,
 * and a background PING every `probeIntervalMs` closes the circuit on the
 * first success.
 */
export function withCircuitBreaker(store: CacheStore, options: CircuitBreakerOptions = {}): BreakerStore {
  const threshold = options.failureThreshold ?? 5;
  const interval = options.probeIntervalMs ?? 500;
  const logger = options.logger ?? silentLogger;
  let failures = 0;
  let probe: NodeJS.Timeout | undefined;
  let closed = false;

  const open = () => {
    if (probe !== undefined || closed) return;
    logger.warn({ failures }, 'Redis cache circuit opened: serving uncached until Redis answers again');
    probe = setInterval(() => {
      store.ping().then(
        () => {
          clearInterval(probe);
          probe = undefined;
          failures = 0;
          logger.info({}, 'Redis cache circuit closed: Redis answers again');
        },
        () => undefined,
      );
    }, interval);
    // A probe must not keep the process alive.
    probe.unref();
  };
  const guard = async <T>(command: () => Promise<T>): Promise<T> => {
    if (probe !== undefined) throw new CacheBypassError();
    try {
      const result = await command();
      failures = 0;
      return result;
    } catch (error) {
      failures += 1;
      if (failures >= threshold) open();
      throw error;
    }
  };

  return {
    kind: store.kind,
    get state() {
      return probe === undefined ? 'closed' : 'open';
    },
    get: (key) => guard(() => store.get(key)),
    getMany: (keys) => guard(() => store.getMany(keys)),
    set: (key, value, ttlMs) => guard(() => store.set(key, value, ttlMs)),
    setIfAbsent: (key, value, ttlMs) => guard(() => store.setIfAbsent(key, value, ttlMs)),
    delete: (key) => guard(() => store.delete(key)),
    raise: (key, value, ttlMs) => guard(() => store.raise(key, value, ttlMs)),
    // Not guarded: a tenant's deletion must reach Redis even while requests bypass it.
    deleteByPrefix: (prefix) => store.deleteByPrefix(prefix),
    ready: (timeoutMs) => store.ready(timeoutMs),
    ping: () => store.ping(),
    async close() {
      closed = true;
      clearInterval(probe);
      probe = undefined;
      await store.close();
    },
  };
}

import type { Cluster, Redis, RedisOptions } from 'ioredis';
import type { Logger } from '@mcpgw/core';
import { errorSummary, silentLogger } from '@mcpgw/core';
import type { CacheStore } from './cache-store.js';
import { ioredis } from './ioredis-module.js';

export interface RedisStoreOptions {
  /**
   * `redis://[user:password@]host:port[/db]` or `rediss://` for one node;
   * `redis+cluster://host1:port1,host2:port2` (or `rediss+cluster://`) for
   * Redis Cluster, listing any reachable seed nodes.
   */
  url: string;
  /** Per-command deadline; a slow Redis must not slow requests. Default 50 ms. */
  commandTimeoutMs?: number;
  logger?: Logger;
}

/** Whether REDIS_URL names a cluster (see RedisStoreOptions.url). */
export function isClusterUrl(url: string): boolean {
  return /^rediss?\+cluster:\/\//i.test(url);
}

/** `raise`: keeps the larger of the stored integer and ARGV[1], in one step. */
const RAISE_SCRIPT = `
local current = tonumber(redis.call('GET', KEYS[1]))
if current ~= nil and current >= tonumber(ARGV[1]) then return tostring(current) end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ARGV[1]
`;

/**
 * The Redis store. Commands fail fast instead of waiting: no offline queue
 * (ioredis would otherwise hold commands while disconnected, and requests would hang), a
 * 50 ms command timeout and no per-request retries; auto-pipelining. Reconnection continues
 * in the background. Subscriptions use a second connection that does queue,
 * so a subscription made while Redis is down is established once it is back.
 */
export function createRedisStore(options: RedisStoreOptions): CacheStore {
  const logger = options.logger ?? silentLogger;
  const commandTimeout = options.commandTimeoutMs ?? 50;
  const common: RedisOptions = {
    commandTimeout,
    connectTimeout: 1000,
    maxRetriesPerRequest: 0,
    // Reconnect quickly and keep trying: recovery is automatic.
    retryStrategy: (times) => Math.min(times * 100, 1000),
    // Commands issued in the same turn of the event loop (the lookups of requests arriving together) go
    // out in one write and come back in one read: fewer system calls per hit. Each keeps its own timeout.
    enableAutoPipelining: true,
  };
  const connect = (offlineQueue: boolean, timeout: number | undefined) =>
    isClusterUrl(options.url)
      ? createCluster(options.url, { ...common, commandTimeout: timeout }, offlineQueue)
      : new (ioredis().Redis)(options.url, { ...common, commandTimeout: timeout, enableOfflineQueue: offlineQueue });
  const client = connect(false, commandTimeout);
  const subscriber = connect(true, undefined);

  // The connection's own errors are expected while Redis is down; commands
  // report them to the caller. Log transitions only, never the URL (it may hold a password).
  let up = false;
  client.on('ready', () => {
    if (!up) logger.info({}, 'Redis cache connected');
    up = true;
  });
  client.on('error', (error: Error) => {
    if (up) logger.warn({ err: errorSummary(error) }, 'Redis cache connection lost; serving uncached');
    up = false;
  });
  subscriber.on('error', () => undefined);

  const listeners = new Map<string, Set<(message: string) => void>>();
  const resyncs = new Set<() => void>();
  subscriber.on('message', (channel: string, message: string) => {
    for (const listener of listeners.get(channel) ?? []) listener(message);
  });
  // 'ready' fires on the first connection and after every reconnection.
  subscriber.on('ready', () => {
    for (const resync of resyncs) resync();
  });

  return {
    kind: 'redis',
    async get(key) {
      return (await client.get(key)) ?? undefined;
    },
    async getMany(keys) {
      if (keys.length === 0) return [];
      return (await client.mget(...keys)).map((value) => value ?? undefined);
    },
    async set(key, value, ttlMs) {
      await client.set(key, value, 'PX', ttlMs);
    },
    async setIfAbsent(key, value, ttlMs) {
      return (await client.set(key, value, 'PX', ttlMs, 'NX')) === 'OK';
    },
    async delete(key) {
      await client.del(key);
    },
    async raise(key, value, ttlMs) {
      return Number(await client.eval(RAISE_SCRIPT, 1, key, String(value), String(ttlMs)));
    },
    async deleteByPrefix(prefix) {
      const match = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
      // A cluster keeps the prefix's slot on one master, but which one is not worth asking: scan them all.
      const nodes: Redis[] = isClusterUrl(options.url) ? (client as Cluster).nodes('master') : [client as Redis];
      let deleted = 0;
      for (const node of nodes) {
        let cursor = '0';
        do {
          const [next, keys] = await node.scan(cursor, 'MATCH', match, 'COUNT', 1000);
          cursor = next;
          if (keys.length > 0) deleted += await node.unlink(...keys);
        } while (cursor !== '0');
      }
      return deleted;
    },
    async publish(channel, message) {
      await client.publish(channel, message);
    },
    subscribe(channel, listener, onResync) {
      let set = listeners.get(channel);
      if (set === undefined) {
        set = new Set();
        listeners.set(channel, set);
        subscriber.subscribe(channel).catch((error: Error) => {
          logger.warn({ err: errorSummary(error) }, 'Redis cache subscription failed');
        });
      }
      set.add(listener);
      if (onResync !== undefined) resyncs.add(onResync);
      return () => {
        set.delete(listener);
        if (onResync !== undefined) resyncs.delete(onResync);
      };
    },
    ready: (timeoutMs) => whenRedisReady(client, timeoutMs),
    async ping() {
      await client.ping();
    },
    async close() {
      subscriber.disconnect();
      client.disconnect();
    },
  };
}

/** Resolves true once the connection is 'ready', or false after `timeoutMs` (it keeps connecting). */
export function whenRedisReady(connection: Redis | Cluster, timeoutMs: number): Promise<boolean> {
  if (connection.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      connection.off('ready', onReady);
      resolve(ok);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), timeoutMs);
    connection.once('ready', onReady);
  });
}

/**
 * A connection for other Redis users of the gateway (the tenant event bus):
 * one node or a cluster, as the URL says, with the caller's options.
 */
export function connectRedis(url: string, options: RedisOptions): Redis | Cluster {
  return isClusterUrl(url)
    ? createCluster(url, options, options.enableOfflineQueue ?? true)
    : new (ioredis().Redis)(url, options);
}

/** A Redis Cluster client for a `redis+cluster://` URL (see RedisStoreOptions.url). */
export function createCluster(url: string, common: RedisOptions, offlineQueue: boolean): Cluster {
  const tls = /^rediss/i.test(url);
  const seeds = url.replace(/^rediss?\+cluster:\/\//i, '').split(',');
  let username: string | undefined;
  let password: string | undefined;
  const nodes = seeds.map((seed) => {
    const parsed = new URL(`redis://${seed}`);
    if (parsed.username !== '') username = decodeURIComponent(parsed.username);
    if (parsed.password !== '') password = decodeURIComponent(parsed.password);
    return { host: parsed.hostname.replace(/^\[|\]$/g, ''), port: Number(parsed.port || 6379) };
  });
  const { retryStrategy, ...redisOptions } = common;
  return new (ioredis().Cluster)(nodes, {
    enableOfflineQueue: offlineQueue,
    clusterRetryStrategy: (times) => retryStrategy?.(times) ?? 1000,
    redisOptions: {
      ...redisOptions,
      ...(username === undefined ? {} : { username }),
      ...(password === undefined ? {} : { password }),
      ...(tls ? { tls: {} } : {}),
    },
  });
}

import type { Cluster, RedisOptions } from 'ioredis';
import { ioredis } from './ioredis-module.js';

/** Whether REDIS_URL names a cluster (see RedisConnectionOptions.url). */
export function isClusterUrl(url: string): boolean {
  return /^rediss?\+cluster:\/\//i.test(url);
}

/** A Redis Cluster client for a `redis+cluster://` URL (see RedisConnectionOptions.url). */
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

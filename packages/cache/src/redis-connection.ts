import { randomBytes } from 'node:crypto';
import type { Cluster, Redis, RedisOptions } from 'ioredis';
import type { Logger } from '@mcpgw/core';
import { errorSummary, silentLogger } from '@mcpgw/core';
import { createCluster, isClusterUrl } from './redis-cluster.js';
import { ioredis } from './ioredis-module.js';

/** A first subscription within this long of opening the connection is a normal start, not a gap. */
const FIRST_CONNECTION_GRACE_MS = 1000;

/** Heartbeats published but not heard in a row before the subscription counts as silent. */
const MISSED_HEARTBEATS = 3;

export interface RedisConnectionOptions {
  /**
   * `redis://[user:password@]host:port[/db]` or `rediss://` for one node;
   * `redis+cluster://host1:port1,host2:port2` (or `rediss+cluster://`) for
   * Redis Cluster, listing any reachable seed nodes.
   */
  readonly url: string;
  /** Per-command deadline of the command client: a slow Redis must not slow requests. Default 50 ms. */
  readonly commandTimeoutMs?: number;
  /**
   * How often the connection publishes a heartbeat to its own subscriber. A
   * subscription that stops hearing its heartbeats (three in a row) is
   * silent without having dropped (a half-open connection), and is
   * reconnected: a gap like any other. Default 1,000 ms.
   */
  readonly heartbeatMs?: number;
  readonly logger?: Logger;
}

/** Told once the subscriptions hold again. `gap`: messages may have been missed since the last time they held. */
export type ResyncListener = (gap: boolean) => void;

/**
 * The process's Redis: one command client (the cache store, the rate-limit
 * counters, the leases and the replica bus's publishing share it) and one subscriber
 * connection (pub/sub takes a connection for itself), opened once, with one
 * readiness wait and one log line per change of state.
 */
export interface RedisConnection {
  /** Whether the URL names a Redis Cluster. */
  readonly cluster: boolean;
  /**
   * The command client. No offline queue and a per-command deadline
   * (ioredis would otherwise hold commands while disconnected): a command
   * fails at once while Redis is away and its caller degrades (the cache
   * serves uncached, counters count in process, the bus owes a resync).
   */
  readonly client: Redis | Cluster;
  /** CLIENT SETNAME of the command client (operators find it in CLIENT LIST). */
  readonly clientName: string;
  /** CLIENT SETNAME of the subscriber connection. */
  readonly subscriberName: string;
  /** The masters to SCAN (the one node, or every master of the cluster). */
  masters(): Redis[];
  /**
   * Delivers messages on `channel` from the one subscriber connection; the
   * channel is subscribed while it has a listener. Returns an unsubscribe
   * (safe to call twice). The replica bus (createRedisReplicaBus) is its
   * user: consumers subscribe to the bus, not here.
   */
  subscribe(channel: string, listener: (message: string) => void): () => void;
  /**
   * Called each time the subscriber connection has (re)subscribed every
   * channel; the replica bus turns `gap` into its one gap signal. With `gap` true (a reconnection, or a first
   * connection later than a normal start) messages may have been lost, and
   * the listener must read what it holds again from the source of truth.
   */
  onResync(listener: ResyncListener): () => void;
  /** Resolves true once both connections are ready, false after `timeoutMs` (they keep connecting). */
  ready(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/** Opens the process's Redis connections (see RedisConnection). */
export function openRedisConnection(options: RedisConnectionOptions): RedisConnection {
  const logger = options.logger ?? silentLogger;
  const id = randomBytes(9).toString('base64url');
  const clientName = `mcpgw-${id}`;
  const subscriberName = `mcpgw-sub-${id}`;
  const cluster = isClusterUrl(options.url);
  const common: RedisOptions = {
    connectTimeout: 1000,
    maxRetriesPerRequest: 0,
    // Nothing waits for Redis: commands fail at once while it is away; the resync catches up.
    enableOfflineQueue: false,
    // Reconnect quickly and keep trying: recovery is automatic.
    retryStrategy: (times) => Math.min(times * 100, 1000),
  };
  const connect = (extra: RedisOptions): Redis | Cluster =>
    cluster
      ? createCluster(options.url, { ...common, ...extra }, false)
      : new (ioredis().Redis)(options.url, { ...common, ...extra });
  const client = connect({
    commandTimeout: options.commandTimeoutMs ?? 50,
    connectionName: clientName,
    // Commands issued in the same turn of the event loop (the lookups of requests arriving together) go
    // out in one write and come back in one read: fewer system calls per hit. Each keeps its own timeout.
    enableAutoPipelining: true,
  });
  // Subscriptions are restored here on 'ready' (not by ioredis), so this module knows when they hold again.
  const subscriber = connect({ connectionName: subscriberName, autoResubscribe: false });

  const channels = new Map<string, Set<(message: string) => void>>();
  const resyncs = new Set<ResyncListener>();
  let closed = false;

  // One log line per change of state, never the URL (it may hold a password).
  let up = false;
  let everUp = false;
  const state = (next: boolean, error?: Error) => {
    if (up === next) return;
    if (next) logger.info({}, everUp ? 'Redis connection restored' : 'Redis connected');
    else
      logger.warn(
        { err: errorSummary(error) },
        'Redis connection lost: serving uncached, counting rate limits in process, replicas resync once it is back',
      );
    up = next;
    everUp ||= next;
  };
  const bothReady = () => client.status === 'ready' && subscriber.status === 'ready';
  client.on('ready', () => state(bothReady()));
  subscriber.on('ready', () => state(bothReady()));
  client.on('error', (error: Error) => state(false, error));
  subscriber.on('error', (error: Error) => state(false, error));

  subscriber.on('message', (channel: string, message: string) => {
    if (closed) return;
    for (const listener of [...(channels.get(channel) ?? [])]) listener(message);
  });

  const quietly = (pending: Promise<unknown>): Promise<void> =>
    pending.then(
      () => undefined,
      // A command lost with the connection is redone by the next 'ready'.
      () => undefined,
    );

  // 'ready' fires on the first connection and after every reconnection.
  const openedAt = Date.now();
  let subscribedBefore = false;
  subscriber.on('ready', () => {
    const gap = subscribedBefore || Date.now() - openedAt > FIRST_CONNECTION_GRACE_MS;
    subscribedBefore = true;
    const names = [...channels.keys()];
    const resubscribed = names.length === 0 ? Promise.resolve() : quietly(subscriber.subscribe(...names));
    void resubscribed.then(() => {
      if (closed || subscriber.status !== 'ready') return;
      for (const resync of [...resyncs]) resync(gap);
    });
  });

  // The heartbeat: a message to this connection's own subscriber each period. What Redis accepted but the
  // subscriber never delivered shows a subscription that went silent without an error (nothing else would).
  const heartbeatChannel = `mcpgw:heartbeat:${id}`;
  let [sent, heard, missed] = [0, 0, 0];
  channels.set(heartbeatChannel, new Set([(message: string) => void (heard = Math.max(heard, Number(message) || 0))]));
  const heartbeat = setInterval(() => {
    if (closed) return;
    if (client.status !== 'ready' || subscriber.status !== 'ready') {
      missed = 0;
      return;
    }
    missed = sent > heard ? missed + 1 : 0;
    if (missed >= MISSED_HEARTBEATS) {
      missed = 0;
      heard = sent;
      logger.warn({}, 'Redis subscription went silent; reconnecting it');
      subscriber.disconnect(true);
      return;
    }
    const seq = sent + 1;
    client.publish(heartbeatChannel, String(seq)).then(
      () => void (sent = Math.max(sent, seq)),
      // Not accepted: nothing to expect back (the command client's own trouble shows elsewhere).
      () => undefined,
    );
  }, options.heartbeatMs ?? 1000);
  heartbeat.unref();

  return {
    cluster,
    client,
    clientName,
    subscriberName,
    masters: () => (cluster ? (client as Cluster).nodes('master') : [client as Redis]),
    subscribe(channel, listener) {
      if (closed) return () => {};
      // A wrapper per subscription, so the same function subscribed twice is two subscriptions.
      const entry = (message: string) => listener(message);
      let set = channels.get(channel);
      if (set === undefined) {
        channels.set(channel, (set = new Set()));
        if (subscriber.status === 'ready') void quietly(subscriber.subscribe(channel));
      }
      set.add(entry);
      return () => {
        if (!set.delete(entry) || set.size > 0 || channels.get(channel) !== set) return;
        channels.delete(channel);
        if (subscriber.status === 'ready' && !closed) void quietly(subscriber.unsubscribe(channel));
      };
    },
    onResync(listener) {
      const entry: ResyncListener = (gap) => listener(gap);
      resyncs.add(entry);
      return () => void resyncs.delete(entry);
    },
    ready: async (timeoutMs) =>
      (await Promise.all([whenRedisReady(client, timeoutMs), whenRedisReady(subscriber, timeoutMs)])).every(Boolean),
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(heartbeat);
      channels.clear();
      resyncs.clear();
      await Promise.allSettled([quit(subscriber), quit(client)]);
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

async function quit(connection: Redis | Cluster): Promise<void> {
  if (connection.status === 'ready') await connection.quit().catch(() => undefined);
  connection.disconnect();
}

import { randomBytes } from 'node:crypto';
import type { ReplicaBus, ReplicaBusListener } from '@mcpgw/core';
import { checkTopic, decodeBusFrame, encodeBusFrame } from '@mcpgw/core';
import { LISTEN_HEARTBEAT_MS, listenOnPostgres } from './postgres-listener.js';
import type { SqlExecutor } from './sql-database.js';

/** The one NOTIFY channel every bus message travels on (a topic is part of the payload, not a channel). */
export const BUS_CHANNEL = 'mcpgw_bus';

/**
 * Postgres refuses a NOTIFY payload of 8000 bytes or more (its default
 * build); the payload is the topic, a newline and the frame.
 */
const MAX_PAYLOAD_BYTES = 7999;

export interface PostgresReplicaBusOptions {
  /** DATABASE_URL: the listening connection is a dedicated one (a pooled one would lose its LISTEN). */
  readonly url: string;
  /** Where NOTIFY is sent: the control plane's pool. */
  readonly db: SqlExecutor;
  /**
   * NOTIFY channels written by others than a bus (the control plane's own
   * announcement at commit, `mcpgw_control_plane`), each delivered as the
   * messages of a topic: its payload is the message, from another replica.
   */
  readonly channelTopics?: Readonly<Record<string, string>>;
  /** How often the listening connection must answer a `SELECT 1`. Default 5,000 ms. */
  readonly heartbeatMs?: number;
  /** The listening connection was lost (it reconnects by itself); for logs. */
  readonly onLost?: (error: unknown) => void;
}

export interface PostgresReplicaBus extends ReplicaBus {
  readonly transport: 'postgres';
  /** This bus's id in every frame it publishes. */
  readonly replicaId: string;
  /** The listening connection's application_name in pg_stat_activity. */
  readonly listenerName: string;
}

/**
 * The bus over Postgres LISTEN/NOTIFY (docs/adr/0012-one-bus-two-transports.md),
 * for several replicas without Redis: every message is a NOTIFY on
 * {@link BUS_CHANNEL} through the pool, heard on the control plane's one
 * listening connection with its heartbeat. Every replica hears every topic
 * and delivers what it subscribes to (a control plane's traffic: revisions,
 * invalidations, source changes of listened tenants). The gap is the
 * listening connection's: it dropped, or its heartbeat found it silent, and
 * it was reopened. One replica's messages arrive in the order it published
 * them. Messages must stay small: a payload of 8000 bytes or more
 * is refused by Postgres, so a larger publish rejects here.
 * Resolves once the connection listens (a database that is not there fails the start).
 */
export async function openPostgresReplicaBus(options: PostgresReplicaBusOptions): Promise<PostgresReplicaBus> {
  const replicaId = randomBytes(9).toString('base64url');
  const listenerName = `mcpgw-bus-${replicaId}`;
  const channelTopics = new Map(Object.entries(options.channelTopics ?? {}));
  const topics = new Map<string, Set<ReplicaBusListener>>();
  const gaps = new Set<() => void>();
  let closed = false;
  let queue: Promise<void> = Promise.resolve();

  const deliver = (topic: string, message: string, own: boolean) => {
    if (closed) return;
    for (const listener of [...(topics.get(topic) ?? [])]) listener(message, own);
  };
  const stop = await listenOnPostgres(
    options.url,
    [BUS_CHANNEL, ...channelTopics.keys()],
    {
      onNotify(payload, channel) {
        const native = channelTopics.get(channel);
        if (native !== undefined) return deliver(native, payload, false);
        const newline = payload.indexOf('\n');
        const frame = newline > 0 ? decodeBusFrame(payload.slice(newline + 1)) : undefined;
        // Someone else's NOTIFY on the bus channel: not ours to read.
        if (frame === undefined) return;
        deliver(payload.slice(0, newline), frame.message, frame.origin === replicaId);
      },
      onResubscribed() {
        if (!closed) for (const gap of [...gaps]) gap();
      },
      onLost: (error) => options.onLost?.(error),
    },
    options.heartbeatMs ?? LISTEN_HEARTBEAT_MS,
    listenerName,
  );

  return {
    transport: 'postgres',
    maxMessageBytes: MAX_PAYLOAD_BYTES,
    replicaId,
    listenerName,
    async publish(topic, message) {
      checkTopic(topic);
      if (closed) throw new Error('the bus is closed');
      const payload = `${topic}\n${encodeBusFrame(replicaId, message)}`;
      const bytes = Buffer.byteLength(payload);
      if (bytes > MAX_PAYLOAD_BYTES) {
        throw new Error(`a bus message of ${bytes} bytes is over Postgres's NOTIFY bound (${MAX_PAYLOAD_BYTES})`);
      }
      // One NOTIFY after the other: on several pooled connections they could commit, and arrive, out of order.
      const sent = queue.then(() => options.db.query('SELECT pg_notify($1, $2)', [BUS_CHANNEL, payload]));
      queue = sent.then(
        () => undefined,
        () => undefined,
      );
      await sent;
    },
    subscribe(topic, listener) {
      checkTopic(topic);
      if (closed) return () => undefined;
      const entry: ReplicaBusListener = (message, own) => listener(message, own);
      let set = topics.get(topic);
      if (set === undefined) topics.set(topic, (set = new Set()));
      set.add(entry);
      const owned = set;
      return () => {
        owned.delete(entry);
        if (owned.size === 0 && topics.get(topic) === owned) topics.delete(topic);
      };
    },
    onGap(listener) {
      const entry = () => listener();
      gaps.add(entry);
      return () => void gaps.delete(entry);
    },
    // The listening connection was up before this resolved; a drop since is the gap's business.
    ready: async () => true,
    async close() {
      if (closed) return;
      closed = true;
      topics.clear();
      gaps.clear();
      await stop();
    },
  };
}

/**
 * Told of one message on a topic. `fromThisReplica`: this process published
 * it (the transport's echo); a consumer that already acted on its own
 * message skips it.
 */
export type ReplicaBusListener = (message: string, fromThisReplica: boolean) => void;

/**
 * The one way replicas learn of change (docs/adr/0012-one-bus-two-transports.md):
 * configuration revisions, cache invalidations and source changes are
 * messages on topics, carried by Redis pub/sub, Postgres LISTEN/NOTIFY or,
 * for a single replica, in process. Delivery is at most once: a transport
 * that may have lost messages (a reconnection, a subscription gone silent,
 * a first connection later than a normal start) says so once with a gap,
 * after every topic is subscribed again, and each consumer then reads what
 * it holds from its source of truth once. That is the one resync rule.
 */
export interface ReplicaBus {
  /** Which transport carries the messages (for logs and readiness). */
  readonly transport: 'redis' | 'postgres' | 'in-process';
  /**
   * The largest message (UTF-8 bytes, topic included) the transport carries:
   * Postgres refuses a NOTIFY payload of 8000 bytes or more. A larger
   * publish rejects and sends nothing.
   */
  readonly maxMessageBytes: number;
  /**
   * Sends `message` to every subscriber of `topic` in the deployment, this
   * replica's included (as an echo). Rejects when it was not sent (the
   * transport is away, or the message is too large): the caller owes what it
   * meant to say, nothing is queued.
   */
  publish(topic: string, message: string): Promise<void>;
  /** Delivers the messages of `topic` while subscribed; returns an unsubscribe (safe to call twice). */
  subscribe(topic: string, listener: ReplicaBusListener): () => void;
  /**
   * Called after each gap, once every topic holds again: messages may have
   * been lost since the last time they held. Returns an unsubscribe.
   */
  onGap(listener: () => void): () => void;
  /** Resolves true once the transport is connected (at once in process), false after `timeoutMs`. */
  ready(timeoutMs: number): Promise<boolean>;
  /** Stops delivery; a bus made on a connection its caller owns leaves the connection open. */
  close(): Promise<void>;
}

/** Topic names travel in Redis channel names and Postgres payloads: printable, no separator, bounded. */
const TOPIC = /^[\x21-\x7e]{1,200}$/;

/** Throws unless `topic` is a name every transport carries unchanged. */
export function checkTopic(topic: string): void {
  if (!TOPIC.test(topic)) throw new Error(`not a bus topic (1 to 200 printable ASCII characters): ${topic}`);
}

/**
 * One replica's bus: messages reach this process's subscribers, in
 * publication order, each in a microtask of its own (a publisher never runs
 * its subscribers inside its own call). Nothing is lost, so there is no gap.
 */
export function createInProcessReplicaBus(): ReplicaBus {
  const topics = new Map<string, Set<ReplicaBusListener>>();
  let closed = false;
  return {
    transport: 'in-process',
    maxMessageBytes: Number.POSITIVE_INFINITY,
    async publish(topic, message) {
      checkTopic(topic);
      if (closed) throw new Error('the bus is closed');
      for (const listener of [...(topics.get(topic) ?? [])]) queueMicrotask(() => listener(message, true));
    },
    subscribe(topic, listener) {
      checkTopic(topic);
      if (closed) return () => undefined;
      // A wrapper per subscription, so the same function subscribed twice is two subscriptions.
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
    onGap: () => () => undefined,
    ready: async () => true,
    async close() {
      closed = true;
      topics.clear();
    },
  };
}

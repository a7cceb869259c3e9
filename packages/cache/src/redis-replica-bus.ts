import { randomBytes } from 'node:crypto';
import type { ReplicaBus, ReplicaBusListener } from '@mcpgw/core';
import { checkTopic, decodeBusFrame, encodeBusFrame } from '@mcpgw/core';
import type { RedisConnection } from './redis-connection.js';

/** What a Redis message may weigh at most (a tenant event's own bound is far below it). */
const MAX_MESSAGE_BYTES = 64 * 1024;

/** The Redis transport of the bus, with the connection it rides. */
export interface RedisReplicaBus extends ReplicaBus {
  readonly transport: 'redis';
  /** This bus's id in every frame it publishes. */
  readonly replicaId: string;
  /** Frames received that were not frames at all (another writer on a shared Redis), dropped unread. */
  dropped(): number;
}

/**
 * The bus over Redis pub/sub (docs/adr/0012-one-bus-two-transports.md): a
 * topic is a channel, subscribed on the process's one subscriber connection
 * while it has a listener, and published with the command client (no offline
 * queue: a publish while Redis is away rejects at once). The gap is the
 * connection's: a reconnection of the subscriber, a late first connection, or
 * a subscription its heartbeat found silent (RedisConnection.onResync).
 * Several buses may share one connection; each has its own replica id, and
 * closing a bus leaves the connection to its owner.
 */
export function createRedisReplicaBus(connection: RedisConnection): RedisReplicaBus {
  const replicaId = randomBytes(9).toString('base64url');
  const stops = new Set<() => void>();
  let dropped = 0;
  let closed = false;
  return {
    transport: 'redis',
    maxMessageBytes: MAX_MESSAGE_BYTES,
    replicaId,
    dropped: () => dropped,
    async publish(topic, message) {
      checkTopic(topic);
      if (closed) throw new Error('the bus is closed');
      const frame = encodeBusFrame(replicaId, message);
      if (Buffer.byteLength(frame) + topic.length > MAX_MESSAGE_BYTES) {
        throw new Error(`a bus message of ${Buffer.byteLength(frame)} bytes is over the Redis transport's bound`);
      }
      await connection.client.publish(topic, frame);
    },
    subscribe(topic, listener: ReplicaBusListener) {
      checkTopic(topic);
      if (closed) return () => undefined;
      const stop = connection.subscribe(topic, (text) => {
        if (closed) return;
        const frame = decodeBusFrame(text);
        if (frame === undefined) {
          dropped += 1;
          return;
        }
        listener(frame.message, frame.origin === replicaId);
      });
      const entry = () => {
        stops.delete(entry);
        stop();
      };
      stops.add(entry);
      return entry;
    },
    onGap(listener) {
      const stop = connection.onResync((gap) => {
        if (gap && !closed) listener();
      });
      stops.add(stop);
      return () => {
        stops.delete(stop);
        stop();
      };
    },
    ready: (timeoutMs) => connection.ready(timeoutMs),
    async close() {
      closed = true;
      for (const stop of [...stops]) stop();
      stops.clear();
    },
  };
}

import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@mcpgw/core';
import { inspector, redisUrl, requireRedis, testNamespace } from '@mcpgw/test-helpers/redis';
import { collectEvents } from '@mcpgw/test-helpers/tenant-event-collector';
import { within } from '@mcpgw/test-helpers/within';
import type { RedisTenantEventBus } from '../src/redis-tenant-event-bus.js';
import { createRedisTenantEventBus } from '../src/redis-tenant-event-bus.js';
import type { TenantEvent } from '../src/tenant-events.js';
import { encodeEnvelope } from '../src/tenant-event-wire.js';
import { encodeBusFrame } from '@mcpgw/core';

// Two buses on the shared Redis stand for two replicas (one namespace per
// test, so other runs on the same server hear nothing of them). Redis itself
// is never restarted: a lost connection is one subscriber connection killed
// by its own id.

let redis: Redis;
const opened: RedisTenantEventBus[] = [];

/** A connected bus: publishes made before its connections are up are not sent (only owed as `stale`). */
const open = async (namespace: string, options: { maxListenersPerTenant?: number } = {}) => {
  const bus = createRedisTenantEventBus({ url: redisUrl(), namespace, logger: silentLogger, ...options });
  opened.push(bus);
  expect(await bus.ready(5000)).toBe(true);
  return bus;
};

/** The channels of `namespace` Redis has subscribers for (any replica's). */
const channels = async (namespace: string) => (await redis.pubsub('CHANNELS', `${namespace}:events:*`)).sort();

/** Resolves once Redis lists exactly `expected` (subscribing is asynchronous). */
async function channelsBecome(namespace: string, expected: string[]): Promise<void> {
  await within(10_000, async () => expect(await channels(namespace)).toEqual(expected), 'the subscribed channels');
}

/** The id of the one connection named `name` (CLIENT LIST), to kill it alone. */
async function clientId(name: string): Promise<string> {
  const lines = String(await redis.client('LIST')).split('\n');
  const ids = lines.filter((line) => line.includes(` name=${name} `)).map((line) => /^id=(\d+) /.exec(line)?.[1]);
  expect(ids).toHaveLength(1);
  return ids[0]!;
}

const updated = (tenantId: string, uri: string, sourceId = 'docs'): TenantEvent => ({
  type: 'source',
  tenantId,
  sourceId,
  change: { type: 'resource-updated', uri },
});

beforeAll(async () => {
  await requireRedis();
  redis = inspector();
  await redis.connect();
});

afterEach(async () => {
  await Promise.all(opened.splice(0).map((bus) => bus.close()));
});

afterAll(() => redis?.disconnect());

describe('the Redis tenant event bus', () => {
  it('carries an event published on one replica to the other replica’s listeners of that tenant only', async () => {
    const namespace = testNamespace('events');
    const [one, two] = [await open(namespace), await open(namespace)];
    const acme = collectEvents<TenantEvent>();
    const other = collectEvents<TenantEvent>();
    one.subscribe('acme', acme.listener);
    one.subscribe('other', other.listener);
    await channelsBecome(namespace, [`${namespace}:events:acme`, `${namespace}:events:other`]);

    two.publish(updated('acme', 'docs://a'));
    two.publish({ type: 'configuration', tenantId: 'acme' });
    await acme.next((event) => event.type === 'configuration');
    expect(acme.events).toEqual([updated('acme', 'docs://a'), { type: 'configuration', tenantId: 'acme' }]);
    // The other tenant's channel carried nothing: a marker sent there after arrives alone.
    two.publish({ type: 'stale', tenantId: 'other' });
    await other.next((event) => event.type === 'stale');
    expect(other.events).toEqual([{ type: 'stale', tenantId: 'other' }]);
  });

  it('tells the publisher’s own listeners at once and only once (its echo is skipped)', async () => {
    const namespace = testNamespace('events');
    const [one, two] = [await open(namespace), await open(namespace)];
    const mine = collectEvents<TenantEvent>();
    const theirs = collectEvents<TenantEvent>();
    one.subscribe('acme', mine.listener);
    two.subscribe('acme', theirs.listener);
    await channelsBecome(namespace, [`${namespace}:events:acme`]);

    one.publish({ type: 'configuration', tenantId: 'acme' });
    // Synchronously, before any round trip to Redis.
    expect(mine.events).toEqual([{ type: 'configuration', tenantId: 'acme' }]);
    await theirs.next((event) => event.type === 'configuration');
    // The echo of the first has come back to `one` before this second one does, on the same channel.
    two.publish({ type: 'stale', tenantId: 'acme' });
    await mine.next((event) => event.type === 'stale');
    expect(mine.events).toEqual([
      { type: 'configuration', tenantId: 'acme' },
      { type: 'stale', tenantId: 'acme' },
    ]);
  });

  it('drops malformed, oversized and foreign messages, counts them, and keeps delivering', async () => {
    const namespace = testNamespace('events');
    const bus = await open(namespace);
    const acme = collectEvents<TenantEvent>();
    bus.subscribe('acme', acme.listener);
    await channelsBecome(namespace, [`${namespace}:events:acme`]);
    const channel = `${namespace}:events:acme`;
    // Each in the bus's frame from another replica, so that the tenant event bus reads it.
    const bad = [
      'not json',
      JSON.stringify({ v: 2, event: { type: 'source', tenantId: 'acme' } }),
      // An envelope of the previous wire version (the origin inside it).
      JSON.stringify({ v: 1, origin: 'elsewhere', event: { type: 'stale', tenantId: 'acme' } }),
      JSON.stringify({ v: 2, event: { type: 'stale', tenantId: 'acme' }, extra: true }),
      // A valid event of another tenant on this tenant's channel.
      encodeEnvelope({ type: 'configuration', tenantId: 'other' }),
      encodeEnvelope(updated('acme', `docs://${'x'.repeat(20_000)}`)),
    ];
    for (const message of bad) await redis.publish(channel, encodeBusFrame('elsewhere', message));
    // Not a frame at all: the transport drops it before any tenant event bus sees it.
    await redis.publish(channel, 'no frame');
    await redis.publish(channel, encodeBusFrame('elsewhere', encodeEnvelope(updated('acme', 'docs://fine'))));
    await acme.next((event) => event.type === 'source');
    expect(acme.events).toEqual([updated('acme', 'docs://fine')]);
    expect(bus.stats()).toMatchObject({ dropped: bad.length, received: 1 });
  });

  it('subscribes to a tenant’s channel only while a listener is left, and releases it after the last', async () => {
    const namespace = testNamespace('events');
    const bus = await open(namespace);
    expect(await channels(namespace)).toEqual([]);
    const first = bus.subscribe('acme', () => undefined);
    const second = bus.subscribe('acme', () => undefined);
    await channelsBecome(namespace, [`${namespace}:events:acme`]);
    first();
    first();
    // One listener is left: still subscribed (checked after a round trip on the same connection).
    const beta = bus.subscribe('beta', () => undefined);
    await channelsBecome(namespace, [`${namespace}:events:acme`, `${namespace}:events:beta`]);
    second();
    await channelsBecome(namespace, [`${namespace}:events:beta`]);
    beta();
    await channelsBecome(namespace, []);
  });

  it('tells its listeners stale once its subscriber connection is back after being killed, and delivers again', async () => {
    const namespace = testNamespace('events');
    const [one, two] = [await open(namespace), await open(namespace)];
    const acme = collectEvents<TenantEvent>();
    const beta = collectEvents<TenantEvent>();
    one.subscribe('acme', acme.listener);
    one.subscribe('beta', beta.listener);
    await channelsBecome(namespace, [`${namespace}:events:acme`, `${namespace}:events:beta`]);

    await redis.client('KILL', 'ID', await clientId(one.subscriberName));

    await acme.next((event) => event.type === 'stale', 10_000);
    await beta.next((event) => event.type === 'stale', 10_000);
    expect(acme.events).toEqual([{ type: 'stale', tenantId: 'acme' }]);
    // Subscribed again: the other replica's events arrive as before.
    two.publish({ type: 'configuration', tenantId: 'acme' });
    await acme.next((event) => event.type === 'configuration');
  });

  it('owes the other replicas `stale` for a publish it could not send, and pays once its connection is back', async () => {
    const namespace = testNamespace('events');
    const [one, two] = [await open(namespace), await open(namespace)];
    const theirs = collectEvents<TenantEvent>();
    two.subscribe('acme', theirs.listener);
    await channelsBecome(namespace, [`${namespace}:events:acme`]);

    await redis.client('KILL', 'ID', await clientId(one.publisherName));
    one.publish(updated('acme', 'docs://lost'));
    await theirs.next((event) => event.type === 'stale', 10_000);
    expect(theirs.events).toEqual([{ type: 'stale', tenantId: 'acme' }]);
    expect(one.stats().publishFailed).toBe(1);
    // Two's own connections were never lost: the stale came from one.
    expect(two.stats().received).toBe(1);
  });

  it('delivers every source event of every replica, repeated ones each time, in order', async () => {
    const namespace = testNamespace('events');
    const [one, two] = [await open(namespace), await open(namespace)];
    const acme = collectEvents<TenantEvent>();
    one.subscribe('acme', acme.listener);
    await channelsBecome(namespace, [`${namespace}:events:acme`]);

    // One detector per source runs in the deployment (its lease), so an event is one change: none is held back.
    one.publish(updated('acme', 'docs://a'));
    two.publish(updated('acme', 'docs://a'));
    // Then two noticed a change to another resource, twice (two changes).
    two.publish(updated('acme', 'docs://b'));
    two.publish(updated('acme', 'docs://b'));
    two.publish({ type: 'stale', tenantId: 'acme' });
    await acme.next((event) => event.type === 'stale');
    expect(acme.events).toEqual([
      updated('acme', 'docs://a'),
      updated('acme', 'docs://a'),
      updated('acme', 'docs://b'),
      updated('acme', 'docs://b'),
      { type: 'stale', tenantId: 'acme' },
    ]);
    expect(one.stats().received).toBe(4);
  });

  it('keeps delivering to the others when a listener throws, and bounds listeners per tenant', async () => {
    const bus = await open(testNamespace('events'), { maxListenersPerTenant: 2 });
    const acme = collectEvents<TenantEvent>();
    bus.subscribe('acme', () => {
      throw new Error('a broken listener');
    });
    bus.subscribe('acme', acme.listener);
    expect(() => bus.subscribe('acme', () => undefined)).toThrow(/already has 2 event listeners/);
    bus.publish({ type: 'configuration', tenantId: 'acme' });
    expect(acme.events).toEqual([{ type: 'configuration', tenantId: 'acme' }]);
  });
});

import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@mcpgw/core';
import { openRedisConnection } from '@mcpgw/cache';
import { inspector, redisUrl, requireRedis, testNamespace } from '@mcpgw/test-helpers/redis';
import { collectEvents } from '@mcpgw/test-helpers/tenant-event-collector';
import { createRedisLeases } from '../src/leases.js';
import { createRedisTenantEventBus } from '../src/redis-tenant-event-bus.js';
import { createTenantEventProducers } from '../src/tenant-event-producers.js';
import type { TenantEvent } from '../src/tenant-events.js';
import { hubSource } from './hub-source.js';
import { within } from '@mcpgw/test-helpers/within';

// A source's change detection runs on one replica of the deployment, the one
// holding its lease (docs/adr/0010-one-replica-bus.md). Two buses on the
// shared Redis under a namespace of their own stand for two replicas; each
// serves the tenant with a source of its own around the real ChangeHub, so a
// test sees on which replica detection runs (`hub.active`).

const closers: (() => Promise<unknown>)[] = [];

async function replica(namespace: string) {
  const bus = createRedisTenantEventBus({ url: redisUrl(), namespace, logger: silentLogger, leaseTtlMs: 600 });
  expect(await bus.ready(5000)).toBe(true);
  const docs = hubSource('docs');
  const runtime = { runtime: {}, sources: [docs] };
  const events = createTenantEventProducers({
    bus,
    sourcesOf: (tenantId) => (tenantId === 'acme' ? runtime : undefined),
    logger: silentLogger,
  });
  const close = async () => {
    await events.close();
    await bus.close();
  };
  closers.push(close);
  return { bus, docs, events, close };
}

beforeAll(async () => {
  await requireRedis();
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

describe('the change-detection lease', () => {
  it('runs a source’s detection on one of two listening replicas, and both replicas’ listeners hear its changes', async () => {
    const namespace = testNamespace('lease-one');
    const [one, two] = [await replica(namespace), await replica(namespace)];
    const [onOne, onTwo] = [collectEvents<TenantEvent>(), collectEvents<TenantEvent>()];
    one.events.subscribe('acme', onOne.listener);
    two.events.subscribe('acme', onTwo.listener);
    // Both want the source watched; exactly one detects.
    expect(one.events.watchedSources('acme')).toEqual(['docs']);
    expect(two.events.watchedSources('acme')).toEqual(['docs']);
    await within(5000, () => expect([one.docs.hub.active, two.docs.hub.active].filter(Boolean)).toHaveLength(1));
    const [holder, follower] = one.docs.hub.active ? [one, two] : [two, one];
    expect(holder.events.detectingSources('acme')).toEqual(['docs']);
    expect(follower.events.detectingSources('acme')).toEqual([]);
    expect(follower.docs.hub.active).toBe(false);

    holder.docs.hub.publish({ sourceId: 'docs', kind: 'updated', uris: ['docs://a'] });
    const change = {
      type: 'source',
      tenantId: 'acme',
      sourceId: 'docs',
      change: { type: 'resource-updated', uri: 'docs://a' },
    };
    await onOne.next((event) => event.type === 'source', 5000);
    await onTwo.next((event) => event.type === 'source', 5000);
    expect(onOne.events.filter((event) => event.type === 'source')).toEqual([change]);
    expect(onTwo.events.filter((event) => event.type === 'source')).toEqual([change]);
  });

  it('moves detection to the other replica when the holder stops, and tells its listeners `stale`', async () => {
    const namespace = testNamespace('lease-takeover');
    const [one, two] = [await replica(namespace), await replica(namespace)];
    const [onOne, onTwo] = [collectEvents<TenantEvent>(), collectEvents<TenantEvent>()];
    one.events.subscribe('acme', onOne.listener);
    two.events.subscribe('acme', onTwo.listener);
    await within(5000, () => expect([one.docs.hub.active, two.docs.hub.active].filter(Boolean)).toHaveLength(1));
    const [holder, follower, onFollower] = one.docs.hub.active ? [one, two, onTwo] : [two, one, onOne];
    await holder.close();
    await within(5000, () => expect(follower.docs.hub.active).toBe(true));
    // Changes between the holder's end and the takeover went unnoticed: the listeners re-read.
    await onFollower.next((event) => event.type === 'stale', 5000);
    follower.docs.hub.publish({ sourceId: 'docs', kind: 'list_changed', uris: ['docs://b'] });
    await onFollower.next((event) => event.type === 'source', 5000);
  });

  it('is taken over once it expires when its holder stops renewing without releasing it (a crash)', async () => {
    const namespace = testNamespace('lease-expiry');
    const [a, b] = [openRedisConnection({ url: redisUrl() }), openRedisConnection({ url: redisUrl() })];
    closers.push(
      () => a.close(),
      () => b.close(),
    );
    expect(await a.ready(5000)).toBe(true);
    expect(await b.ready(5000)).toBe(true);
    const prefix = `${namespace}:lease:`;
    const seen = { a: [] as string[], b: [] as string[] };
    const stopA = createRedisLeases({ redis: a, prefix, ttlMs: 400 }).hold('acme/docs', {
      acquired: (takeover) => seen.a.push(takeover ? 'takeover' : 'acquired'),
      lost: () => seen.a.push('lost'),
    });
    await within(5000, () => expect(seen.a).toEqual(['acquired']));
    const stopB = createRedisLeases({ redis: b, prefix, ttlMs: 400 }).hold('acme/docs', {
      acquired: (takeover) => seen.b.push(takeover ? 'takeover' : 'acquired'),
      lost: () => seen.b.push('lost'),
    });
    closers.push(async () => {
      stopA();
      stopB();
    });
    // B waits while A renews: two renewals seen in the key's time to live (B tries as often as A renews).
    const redis = inspector();
    await redis.connect();
    closers.push(async () => redis.disconnect());
    let [last, renewals] = [Number.POSITIVE_INFINITY, 0];
    await within(
      5000,
      async () => {
        const ttl = await redis.pttl(`${prefix}acme/docs`);
        if (ttl > last) renewals += 1;
        last = ttl;
        expect(renewals).toBeGreaterThanOrEqual(2);
      },
      'two renewals of the lease',
    );
    expect(seen.b).toEqual([]);
    // A's process stops without releasing (its Redis connection is gone, nothing renews).
    await a.close();
    await within(5000, () => expect(seen.b).toEqual(['takeover']));
  });

  it('is held by each replica for its own listeners while Redis does not answer', async () => {
    // Port 1 on loopback: nothing listens, every command fails at once (no offline queue).
    const dead = openRedisConnection({ url: 'redis://127.0.0.1:1' });
    closers.push(() => dead.close());
    const seen: string[] = [];
    const stop = createRedisLeases({ redis: dead, prefix: 'unused:lease:' }).hold('acme/docs', {
      acquired: (takeover) => seen.push(takeover ? 'takeover' : 'acquired'),
      lost: () => seen.push('lost'),
    });
    closers.push(async () => stop());
    await within(5000, () => expect(seen).toEqual(['acquired']), 'the lease held without Redis');
  });
});

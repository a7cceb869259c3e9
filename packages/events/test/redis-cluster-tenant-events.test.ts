import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@mcpgw/core';
import { type OwnRedisCluster, startRedisCluster } from '@mcpgw/test-helpers/redis';
import { collectEvents } from '@mcpgw/test-helpers/tenant-event-collector';
import { within } from '@mcpgw/test-helpers/within';
import type { RedisTenantEventBus } from '../src/redis-tenant-event-bus.js';
import { createRedisTenantEventBus } from '../src/redis-tenant-event-bus.js';
import type { TenantEvent } from '../src/tenant-events.js';

// The tenant event bus on Redis Cluster (REDIS_URL=redis+cluster://...), three
// masters started by the test: a message published through one node reaches
// a subscriber connected to another (Redis Cluster broadcasts PUBLISH).

let cluster: OwnRedisCluster;
const opened: RedisTenantEventBus[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster();
}, 40_000);
afterAll(async () => {
  await Promise.all(opened.map((bus) => bus.close()));
  await cluster?.close();
});

describe('the tenant event bus on Redis Cluster', () => {
  it('carries events between two replicas, per tenant', async () => {
    const [one, two] = [0, 1].map(() => {
      const bus = createRedisTenantEventBus({ url: cluster.url, logger: silentLogger });
      opened.push(bus);
      return bus;
    }) as [RedisTenantEventBus, RedisTenantEventBus];
    expect(await one.ready(10_000)).toBe(true);
    expect(await two.ready(10_000)).toBe(true);
    const acme = collectEvents<TenantEvent>();
    const beta = collectEvents<TenantEvent>();
    one.subscribe('acme', acme.listener);
    one.subscribe('beta', beta.listener);
    // Subscribing is asynchronous: publish until the first one arrives, then once more.
    await within(
      10_000,
      async () => {
        if (acme.events.length > 0) return;
        two.publish({ type: 'stale', tenantId: 'acme' });
        await acme.next(() => true, 200);
      },
      'a first event on acme',
    );
    two.publish({ type: 'configuration', tenantId: 'acme' });
    await acme.next((event) => event.type === 'configuration');
    two.publish({ type: 'configuration', tenantId: 'beta' });
    await beta.next((event) => event.type === 'configuration');
    expect(beta.events).toEqual([{ type: 'configuration', tenantId: 'beta' }]);
    expect(acme.events.every((event) => event.tenantId === 'acme')).toBe(true);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteNamespace, redisUrl, requireRedis, testNamespace } from '@mcpgw/test-helpers/redis';
import { createAccessActivity } from '../src/access-activity.js';
import type { RedisConnection } from '../src/redis-connection.js';
import { openRedisConnection } from '../src/redis-connection.js';

// The access activity against a real Redis and in process, with an injected
// clock: one entry per caller, action and resource (the latest time), newest
// first, nothing older than the retention, at most maxEntries per tenant.

const HOUR = 3_600_000;
let namespace: string;
let connection: RedisConnection;
beforeAll(async () => {
  await requireRedis();
  namespace = testNamespace('access');
  connection = openRedisConnection({ url: redisUrl(), commandTimeoutMs: 1000 });
  expect(await connection.ready(3000)).toBe(true);
});
afterAll(async () => {
  await connection?.close();
  if (namespace !== undefined) await deleteNamespace(namespace);
});

describe.each(['redis', 'process'] as const)('access activity in %s', (where) => {
  it('keeps the latest time per caller and resource, newest first, within the retention and the cap', async () => {
    let now = Date.UTC(2026, 0, 1);
    const activity = createAccessActivity({
      redis: where === 'redis' ? connection : undefined,
      prefix: `${namespace}:${where}:`,
      retentionMs: 24 * HOUR,
      maxEntries: 3,
      now: () => now,
    });
    const alice = { principal: 'fp-alice', clientId: 'notes-app', grants: ['readers'] } as const;
    const settle = () => (where === 'redis' ? connection.client.ping() : Promise.resolve());
    activity.record('acme', { ...alice, action: 'read', resource: 'notes://a' });
    now += 1000;
    activity.record('acme', { ...alice, action: 'list' });
    now += 1000;
    activity.record('acme', { ...alice, action: 'read', resource: 'notes://a' });
    activity.record('other', { principal: 'fp-bob', action: 'list', grants: [] });
    await settle();
    const listed = await activity.list('acme');
    expect(listed.map((record) => [record.action, record.resource, record.at - Date.UTC(2026, 0, 1)])).toEqual([
      ['read', 'notes://a', 2000],
      ['list', undefined, 1000],
    ]);
    expect(listed[0]).toMatchObject({ principal: 'fp-alice', clientId: 'notes-app', grants: ['readers'] });
    expect(listed[0]).not.toHaveProperty('subject');

    for (const uri of ['notes://b', 'notes://c', 'notes://d']) {
      now += 1000;
      activity.record('acme', { ...alice, action: 'read', resource: uri });
    }
    await settle();
    expect((await activity.list('acme')).map((record) => record.resource)).toEqual([
      'notes://d',
      'notes://c',
      'notes://b',
    ]);
    now += 25 * HOUR;
    expect(await activity.list('acme')).toEqual([]);
    expect(await activity.list('other')).toEqual([]);
  });
});

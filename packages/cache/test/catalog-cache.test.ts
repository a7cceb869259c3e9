import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { within } from '@mcpgw/test-helpers/within';
import type { GatewayCache, GatewayCacheOptions } from '../src/gateway-cache.js';
import { createCachingSource } from '../src/caching-source.js';
import { createGatewayCache } from '../src/gateway-cache.js';
import { deleteNamespace, redisUrl, requireRedis, testNamespace } from '@mcpgw/test-helpers/redis';
import { countingSource } from './counting-source.js';
import { createCatalog } from '@mcpgw/catalog';
import { unrestrictedScope } from '@mcpgw/core';
import { createCursorCodec } from '@mcpgw/protocol';

// The per-source catalog cache: shared by a tenant's callers, one
// backend call for concurrent identical misses within a replica and across
// replicas, and invalidation that reaches every replica within 1 s. Two
// "replicas" are two caches with the same secret against the same Redis.

const secret = randomBytes(32);
const namespace = testNamespace('catalog');
const opened: GatewayCache[] = [];

// A generous Redis command deadline: on a busy test machine the 50 ms default times
// out commands on a live Redis (a late event loop runs the timer before it reads
// the reply), and a timed-out lookup is a miss these counts would see.
/** Backend pages a replica looked up and did not find, for one tenant. */
const misses = (cache: GatewayCache, tenantId: string) => cache.metrics()[tenantId]?.source.misses ?? 0;

async function replica(options: Partial<GatewayCacheOptions> = {}): Promise<GatewayCache> {
  const cache = createGatewayCache({
    key: secret,
    namespace,
    redisUrl: redisUrl(),
    commandTimeoutMs: 1000,
    ...options,
  });
  opened.push(cache);
  expect(await cache.ready(3000)).toBe(true);
  return cache;
}

beforeAll(async () => {
  await requireRedis();
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((cache) => cache.close()));
});
afterAll(async () => {
  await deleteNamespace(namespace);
});

describe('single flight', () => {
  it('collapses 20 concurrent identical misses on two replicas into one backend call', async () => {
    let answer!: () => void;
    const backend = countingSource('docs', new Promise<void>((resolve) => (answer = resolve)));
    // The replica without the lock waits for the other for as long as the test needs, not 500 ms.
    const [a, b] = [await replica({ lockWaitMs: 10_000 }), await replica({ lockWaitMs: 10_000 })];
    const onA = createCachingSource(backend, { tenantId: 'acme', cache: a });
    const onB = createCachingSource(backend, { tenantId: 'acme', cache: b });
    const asked = Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? onA : onB).listResources({ limit: 3 })),
    );
    // The backend answers only once all 20 have missed: they are concurrent, whatever the machine's speed.
    await within(10_000, () => expect(misses(a, 'acme') + misses(b, 'acme')).toBe(20), 'twenty misses');
    answer();
    const pages = await asked;
    expect(backend.calls.list).toBe(1);
    for (const page of pages) expect(page).toEqual(pages[0]);
    // A different page is a different call; templates likewise collapse.
    await Promise.all([onA.listResources({ position: '3', limit: 3 }), onB.listResources({ position: '3', limit: 3 })]);
    expect(backend.calls.list).toBe(2);
    await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? onA : onB).listTemplates()));
    expect(backend.calls.templates).toBe(1);
  });

  it('keys a page by the narrowing the backend was asked for, shared by callers with the same grants', async () => {
    const backend = countingSource('narrowed');
    const cached = createCachingSource(backend, { tenantId: 'acme', cache: await replica() });
    await cached.listResources({ limit: 3, prefixes: ['test://narrowed/a/'] });
    await cached.listResources({ limit: 3, prefixes: ['test://narrowed/a/'] });
    expect(backend.calls.list).toBe(1);
    // Another narrowing, or none, is another backend question.
    await cached.listResources({ limit: 3, prefixes: ['test://narrowed/b/'] });
    await cached.listResources({ limit: 3 });
    expect(backend.calls.list).toBe(3);
  });

  it('shares a page filtered by a caller view only with that view, and never caches an unnamed one', async () => {
    const backend = countingSource('viewed');
    const cached = createCachingSource(backend, { tenantId: 'acme', cache: await replica() });
    const request = { limit: 3, prefixes: ['test://viewed/a/'], ranges: [{ prefix: 'test://viewed/a/', depth: 0 }] };
    const csv = (uri: string) => uri.endsWith('.csv');
    await cached.listResources({ ...request, visible: csv, view: 'csv-readers' });
    await cached.listResources({ ...request, visible: csv, view: 'csv-readers' });
    expect(backend.calls.list).toBe(1);
    // The same ranges with another view (other grants, same literal starts) is another question.
    await cached.listResources({ ...request, visible: (uri) => uri.endsWith('.json'), view: 'json-readers' });
    expect(backend.calls.list).toBe(2);
    // A visibility with no name to key it by is never stored.
    await cached.listResources({ ...request, visible: csv });
    await cached.listResources({ ...request, visible: csv });
    expect(backend.calls.list).toBe(4);
  });

  it('falls back to its own backend call when the replica holding the lock fails', async () => {
    const backend = countingSource('docs');
    const [a, b] = [await replica(), await replica()];
    let called!: () => void;
    const aHoldsLock = new Promise<void>((resolve) => (called = resolve));
    let fail!: () => void;
    const bAsked = new Promise<void>((resolve) => (fail = resolve));
    const failing = {
      ...backend,
      // A backend that fails once B has asked, while A still holds the lock.
      listResources: async () => {
        called();
        await bAsked;
        throw new Error('backend down');
      },
    };
    const onA = createCachingSource(failing, { tenantId: 'fallback', cache: a });
    const onB = createCachingSource(backend, { tenantId: 'fallback', cache: b });
    const first = onA.listResources({ limit: 2 });
    await aHoldsLock; // A's backend is called only once A holds the lock
    const second = onB.listResources({ limit: 2 });
    // B's miss is counted just before it tries the lock A holds.
    await within(10_000, () => expect(misses(b, 'fallback')).toBe(1), "B's miss");
    fail();
    await expect(first).rejects.toThrow('backend down');
    expect((await second).items.map((item) => item.uri)).toEqual(['test://docs/0', 'test://docs/1']);
    expect(backend.calls.list).toBe(1);
  });

  it('does not cache a source whose list ttl is 0', async () => {
    const backend = countingSource('docs');
    const onA = createCachingSource(backend, { tenantId: 'ttl-zero', cache: await replica(), ttlMs: { list: 0 } });
    expect(onA.ttlMs).toEqual({ list: 0, read: 30_000 });
    await onA.listResources({ limit: 1 });
    await onA.listResources({ limit: 1 });
    expect(backend.calls.list).toBe(2);
  });
});

describe('invalidation', () => {
  it('invalidateTenant on one replica reaches the other by its pub/sub message, and spares other tenants', async () => {
    const backend = countingSource('docs');
    const other = countingSource('docs');
    // B never re-reads a generation on its own (only after a gap): only the pub/sub message can tell it.
    const [a, b] = [await replica(), await replica()];
    const onA = createCachingSource(backend, { tenantId: 'invalidated', cache: a });
    const onB = createCachingSource(backend, { tenantId: 'invalidated', cache: b });
    const globexOnB = createCachingSource(other, { tenantId: 'globex', cache: b });
    await onA.listResources({ limit: 1 });
    await onB.listResources({ limit: 1 });
    await globexOnB.listResources({ limit: 1 });
    expect(backend.calls.list).toBe(1);
    backend.version = 2;
    await a.invalidateTenant('invalidated');
    // No gap happens here: only the message can have told B.
    await within(
      10_000,
      async () => expect((await onB.listResources({ limit: 1 })).items[0]?.name).toBe('docs 0 v2'),
      'the new name on B',
    );
    await globexOnB.listResources({ limit: 1 });
    expect(other.calls.list).toBe(1);
  });

  it('a change reported by the source (watch) invalidates the tenant on every replica', async () => {
    const backend = countingSource('docs');
    const [a, b] = [await replica(), await replica()];
    const onA = createCachingSource(backend, { tenantId: 'watched', cache: a });
    const onB = createCachingSource({ ...backend, watch: undefined }, { tenantId: 'watched', cache: b });
    await onB.listTemplates();
    backend.version = 2;
    backend.emit({ type: 'list-changed', uris: ['test://docs/1'] });
    // B never re-reads a generation on its own (only after a gap): only the invalidation message can have told it.
    await within(10_000, async () => expect((await onB.listTemplates())[0]?.name).toBe('docs v2'), 'the new name on B');
    await onA.close();
  });
});

describe('changes handed on', () => {
  it('tells its own watchers of a change only once the tenant is invalidated, so asking again gets the new answer', async () => {
    const backend = countingSource('docs');
    const cache = await replica();
    const cached = createCachingSource(backend, { tenantId: 'handed-on', cache });
    expect((await cached.listTemplates())[0]?.name).toBe('docs v1');
    const answers: Promise<string>[] = [];
    const stop = cached.watch!(() => answers.push(cached.listTemplates().then((page) => page[0]?.name ?? '')));
    backend.version = 2;
    backend.emit({ type: 'list-changed', uris: ['test://docs/1'] });
    await cached.settled!();
    expect(await Promise.all(answers)).toEqual(['docs v2']);
    stop();
    await cached.close();
  });

  it('hands a burst on in order after one invalidation, and settles after the last', async () => {
    const backend = countingSource('docs');
    const inner = await replica();
    let invalidations = 0;
    const cache = { ...inner, invalidateTenant: (id: string) => (invalidations++, inner.invalidateTenant(id)) };
    const cached = createCachingSource(backend, { tenantId: 'burst', cache });
    const seen: string[] = [];
    cached.watch!((change) => seen.push(change.type === 'list-changed' ? 'list' : change.uri));
    backend.emit({ type: 'list-changed', uris: ['test://docs/1'] });
    backend.emit({ type: 'resource-updated', uri: 'test://docs/1' });
    backend.emit({ type: 'resource-updated', uri: 'test://docs/2' });
    expect(seen).toEqual([]);
    await cached.settled!();
    expect(seen).toEqual(['list', 'test://docs/1', 'test://docs/2']);
    expect(invalidations).toBe(1);
    await cached.close();
  });
});

describe('freshness', () => {
  it('a cached source page carries only the freshness it has left, and the merged page honours it', async () => {
    let clock = 1_000_000;
    const cache = createGatewayCache({ key: secret, namespace, now: () => clock });
    opened.push(cache);
    const backend = countingSource('docs');
    const cached = createCachingSource(backend, { tenantId: 'fresh', cache, ttlMs: { list: 60_000 } });
    const first = await cached.listResources({ limit: 5 });
    expect(first.ttlMs).toBeUndefined(); // straight from the backend
    clock += 45_000;
    const again = await cached.listResources({ limit: 5 });
    expect(backend.calls.list).toBe(1);
    expect(again.ttlMs).toBe(15_000);

    const catalog = createCatalog({
      tenantId: 'fresh',
      sources: [cached],
      cursors: createCursorCodec({ key: secret }),
      pageSize: 5,
    });
    const page = await catalog.forScope(unrestrictedScope).listResources(undefined, new AbortController().signal);
    // Not the source's 60 s: only what is left of the cached page's.
    expect(page.ttlMs).toBe(15_000);
  });
});

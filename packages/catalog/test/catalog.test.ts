import { describe, expect, it } from 'vitest';
import type { AccessScope, PageRequest, Source, SourceTtlMs } from '@mcpgw/core';
import { GatewayError, silentLogger, unrestrictedScope } from '@mcpgw/core';
import { createCursorCodec } from '@mcpgw/protocol';
import { createStaticSource } from '@mcpgw/source-static';
import { createCatalog } from '../src/catalog.js';

const signal = new AbortController().signal;
const cursors = createCursorCodec({ key: Buffer.from('c'.repeat(32)) });

function staticSource(id: string, count: number, ttlMs?: SourceTtlMs): Source {
  const source = createStaticSource(
    {
      resources: Array.from({ length: count }, (_, i) => ({
        uri: `test://${id}/${i}`,
        name: `${id}-${i}`,
        text: `${id} ${i}`,
      })),
      templates: [{ uriTemplate: `test://${id}/t/{x}`, name: `${id}-template`, text: 'x={{x}}' }],
    },
    { sourceId: id, tenantId: 'acme', configDir: '.', logger: silentLogger },
  );
  if (ttlMs === undefined) return source;
  return new Proxy(source, { get: (target, key) => (key === 'ttlMs' ? ttlMs : Reflect.get(target, key)) });
}

async function listAll(service: ReturnType<ReturnType<typeof createCatalog>['forScope']>) {
  const uris: string[] = [];
  const pages: number[] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard < 100; guard += 1) {
    const page = await service.listResources(cursor, signal);
    uris.push(...page.resources.map((r) => r.uri));
    pages.push(page.resources.length);
    cursor = page.nextCursor;
    if (cursor === undefined) return { uris, pages };
  }
  throw new Error('listing did not end');
}

describe('catalog', () => {
  it('merges sources in configuration order into pages of 100, without gaps or duplicates', async () => {
    const catalog = createCatalog({
      tenantId: 'acme',
      sources: [staticSource('a', 150), staticSource('empty', 0), staticSource('b', 70)],
      cursors,
    });
    const { uris, pages } = await listAll(catalog.forScope(unrestrictedScope));
    expect(pages).toEqual([100, 100, 20]);
    const expected = [
      ...Array.from({ length: 150 }, (_, i) => `test://a/${i}`),
      ...Array.from({ length: 70 }, (_, i) => `test://b/${i}`),
    ];
    expect(uris).toEqual(expected);
  });

  it('shows and reads only what the scope allows, and treats the rest as missing', async () => {
    const evenOnly: AccessScope = {
      fingerprint: 'even',
      allowsSource: (id) => id !== 'hidden',
      allows: (_id, uri) => Number(uri.split('/').pop()) % 2 === 0,
    };
    const catalog = createCatalog({
      tenantId: 'acme',
      sources: [staticSource('a', 30), staticSource('hidden', 5)],
      cursors,
    });
    const service = catalog.forScope(evenOnly);
    const { uris } = await listAll(service);
    expect(uris).toEqual(Array.from({ length: 15 }, (_, i) => `test://a/${i * 2}`));
    expect(await service.read('test://a/2', signal)).toMatchObject({ contents: [{ text: 'a 2' }] });
    expect(await service.read('test://a/3', signal)).toBeUndefined();
    expect(await service.read('test://hidden/0', signal)).toBeUndefined();
    const templates = await service.listTemplates(undefined, signal);
    expect(templates.resourceTemplates.map((t) => t.name)).toEqual(['a-template']);
  });

  it('bounds the source calls one page makes when the scope filters heavily', async () => {
    const nearlyNothing: AccessScope = {
      fingerprint: 'n',
      allowsSource: () => true,
      allows: (_s, uri) => uri === 'test://a/999',
    };
    const catalog = createCatalog({
      tenantId: 'acme',
      sources: [staticSource('a', 1000)],
      cursors,
      pageSize: 10,
      maxSourceCallsPerPage: 3,
    });
    const service = catalog.forScope(nearlyNothing);
    const first = await service.listResources(undefined, signal);
    expect(first.resources).toEqual([]);
    expect(first.nextCursor).toBeDefined();
    const { uris } = await listAll(service);
    expect(uris).toEqual(['test://a/999']);
  });

  it('refuses a cursor of another principal, another tenant or an older configuration', async () => {
    const sources = [staticSource('a', 150), staticSource('b', 10)];
    const catalog = createCatalog({ tenantId: 'acme', sources, cursors });
    const alice: AccessScope = { ...unrestrictedScope, fingerprint: 'alice' };
    const bob: AccessScope = { ...unrestrictedScope, fingerprint: 'bob' };
    const { nextCursor } = await catalog.forScope(alice).listResources(undefined, signal);
    expect(nextCursor).toBeDefined();
    await expect(catalog.forScope(bob).listResources(nextCursor, signal)).rejects.toMatchObject({
      code: 'MCPGW_CURSOR_INVALID',
    });
    const otherTenant = createCatalog({ tenantId: 'other', sources, cursors });
    await expect(otherTenant.forScope(alice).listResources(nextCursor, signal)).rejects.toMatchObject({
      code: 'MCPGW_CURSOR_INVALID',
    });
    const reordered = createCatalog({ tenantId: 'acme', sources: [sources[1]!, sources[0]!], cursors });
    await expect(reordered.forScope(alice).listResources(nextCursor, signal)).rejects.toMatchObject({
      code: 'MCPGW_CURSOR_INVALID',
    });
  });

  it('returns the shortest ttlMs of the sources that shaped a page, and the owner ttl on reads', async () => {
    const catalog = createCatalog({
      tenantId: 'acme',
      sources: [
        staticSource('a', 50, { list: 40_000, read: 9_000 }),
        staticSource('b', 50, { list: 5_000, read: 1_000 }),
      ],
      cursors,
    });
    const service = catalog.forScope(unrestrictedScope);
    expect((await service.listResources(undefined, signal)).ttlMs).toBe(5_000);
    expect((await service.read('test://a/1', signal))?.ttlMs).toBe(9_000);
  });

  it('routes reads, including template reads, to the source that owns the URI', async () => {
    const catalog = createCatalog({ tenantId: 'acme', sources: [staticSource('a', 1), staticSource('b', 1)], cursors });
    const service = catalog.forScope(unrestrictedScope);
    expect(await service.read('test://b/t/42', signal)).toMatchObject({
      contents: [{ uri: 'test://b/t/42', text: 'x=42' }],
    });
    expect(await service.read('test://c/0', signal)).toBeUndefined();
  });

  describe('with a source whose backend is down', () => {
    const down = (id: string): Source => {
      const unavailable = () =>
        Promise.reject(new GatewayError('MCPGW_SOURCE_UNAVAILABLE', `Source '${id}' is unavailable`));
      return new Proxy(staticSource(id, 5), {
        get: (target, key) =>
          key === 'listResources' || key === 'listTemplates' ? unavailable : Reflect.get(target, key),
      });
    };
    const sources = () => [staticSource('a', 2), down('b'), staticSource('c', 2), down('d')];

    it('lists the rest, names the skipped sources in order, and gives the page ttlMs 0', async () => {
      const service = createCatalog({ tenantId: 'acme', sources: sources(), cursors }).forScope(unrestrictedScope);
      const page = await service.listResources(undefined, signal);
      expect(page.resources.map((r) => r.uri)).toEqual(['test://a/0', 'test://a/1', 'test://c/0', 'test://c/1']);
      expect(page.unavailableSources).toEqual(['b', 'd']);
      expect(page.ttlMs).toBe(0);
      const templates = await service.listTemplates(undefined, signal);
      expect(templates.resourceTemplates.map((t) => t.name)).toEqual(['a-template', 'c-template']);
      expect(templates.unavailableSources).toEqual(['b', 'd']);
      expect(templates.ttlMs).toBe(0);
    });

    it('never names a source the caller may not see, and says nothing when all it sees answered', async () => {
      const onlyAAndC: AccessScope = {
        fingerprint: 'a-and-c',
        allowsSource: (id) => id === 'a' || id === 'c',
        allows: (id) => id === 'a' || id === 'c',
      };
      const service = createCatalog({ tenantId: 'acme', sources: sources(), cursors }).forScope(onlyAAndC);
      for (const page of [
        await service.listResources(undefined, signal),
        await service.listTemplates(undefined, signal),
      ]) {
        expect(page).not.toHaveProperty('unavailableSources');
        expect(page.ttlMs).toBeGreaterThan(0);
      }
    });
  });

  it('rejects two sources with one id', () => {
    expect(() =>
      createCatalog({ tenantId: 'acme', sources: [staticSource('a', 1), staticSource('a', 1)], cursors }),
    ).toThrow(/two sources/);
  });

  describe('narrowing by the caller grants', () => {
    /** A source that records what it was asked. */
    function recording(inner: Source, requests: PageRequest[]): Source {
      return new Proxy(inner, {
        get: (target, key) =>
          key === 'listResources'
            ? (page: PageRequest, s?: AbortSignal) => {
                requests.push(page);
                return target.listResources(page, s);
              }
            : Reflect.get(target, key),
      });
    }

    it('passes the caller prefixes to the source and still filters what comes back', async () => {
      const requests: PageRequest[] = [];
      const scope: AccessScope = {
        fingerprint: 'narrow',
        allowsSource: () => true,
        allows: (_s, uri) => uri.startsWith('test://a/1'),
        listingPrefixes: () => ['test://a/1'],
      };
      const catalog = createCatalog({
        tenantId: 'acme',
        sources: [recording(staticSource('a', 30), requests)],
        cursors,
      });
      const { uris } = await listAll(catalog.forScope(scope));
      expect(uris).toEqual(['test://a/1', ...Array.from({ length: 10 }, (_, i) => `test://a/${10 + i}`)]);
      expect(requests.map((r) => r.prefixes)).toEqual([['test://a/1']]);
    });

    it('makes no source call for a source the caller can see nothing of', async () => {
      const requests: PageRequest[] = [];
      const scope: AccessScope = {
        fingerprint: 'none-of-a',
        allowsSource: () => true,
        allows: (id) => id === 'b',
        listingPrefixes: (id) => (id === 'a' ? [] : undefined),
      };
      const catalog = createCatalog({
        tenantId: 'acme',
        sources: [recording(staticSource('a', 30), requests), staticSource('b', 2)],
        cursors,
      });
      const { uris } = await listAll(catalog.forScope(scope));
      expect(uris).toEqual(['test://b/0', 'test://b/1']);
      expect(requests).toEqual([]);
    });

    it('names a source whose page says a configured bound left entries out', async () => {
      const cut = new Proxy(staticSource('a', 3), {
        get: (target, key) =>
          key === 'listResources'
            ? async (page: PageRequest) => ({ ...(await target.listResources(page)), incomplete: true })
            : Reflect.get(target, key),
      });
      const catalog = createCatalog({ tenantId: 'acme', sources: [cut, staticSource('b', 1)], cursors });
      const page = await catalog.forScope(unrestrictedScope).listResources(undefined, signal);
      expect(page.resources).toHaveLength(4);
      expect(page.incompleteSources).toEqual(['a']);
    });
  });
});

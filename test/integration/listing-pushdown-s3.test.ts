import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccessScope, Principal, Source } from '@mcpgw/core';
import { silentLogger, unrestrictedScope } from '@mcpgw/core';
import { createCatalog } from '@mcpgw/catalog';
import { resolveAccess } from '@mcpgw/policy';
import { createCursorCodec } from '@mcpgw/protocol';
import { createS3Source, s3SourceOptionsSchema } from '@mcpgw/source-s3';
import { startCountingProxy, type CountingProxy } from '../helpers/counting-proxy.js';
import { startS3rver, type S3rverHandle } from '../helpers/s3rver.js';

// A listing narrowed to the caller's grants lists the same
// resources, in the same order, as the full scan filtered afterwards, with at
// most one ListObjectsV2 per granted prefix per page whatever the grants'
// shape (`**`, one level, a suffix within a level, one key); where the
// grants reach exactly what the ranges admit, in the same pages too.

const BUCKET = 'lake';
const PAGE_SIZE = 100;
const signal = new AbortController().signal;
const cursors = createCursorCodec({ key: Buffer.from('p'.repeat(32)) });
const caller: Principal = { issuer: 'https://idp', subject: 'ann', scopes: [], groups: [], expiresAt: 0 };

/**
 * ~2,200 keys under several prefixes, with neighbours that sort around them
 * (`p2_x`, `p2~.txt`, `p20/`). Not `p2-x` or `p2.txt`: s3rver lists by
 * walking its folders, so a key with a character below `/` after a folder's
 * name comes after that folder's keys there (S3 lists in byte order), and
 * the full walk this test compares with would drop it.
 */
function seedKeys(): string[] {
  const keys: string[] = [];
  for (let p = 0; p < 8; p += 1) {
    for (let k = 0; k < 220; k += 1) keys.push(`p${p}/k${String(k).padStart(4, '0')}.txt`);
    for (let k = 0; k < 40; k += 1) keys.push(`p${p}/sub/k${String(k).padStart(4, '0')}.md`);
  }
  keys.push('p2_x', 'p2~.txt', 'p20/a', 'p20/b.txt', 'top.txt', 'p5/sub/deep/x1', 'p5/sub/deep/y1', 'z/', 'z/k0005');
  return keys;
}

async function putAll(client: S3Client, keys: readonly string[]): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < keys.length) {
      const key = keys[next++]!;
      await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: key }));
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

let s3: S3rverHandle;
let proxy: CountingProxy;
let source: Source;
/** Every resource of the bucket in listing order (an unrestricted full walk). */
let everything: string[];

const listRequests = () => proxy.requests.filter((r) => r.startsWith('GET ') && r.includes('list-type=2'));
const listCalls = () => listRequests().length;
/**
 * ListObjectsV2 calls since `from` requests: distinct requests, so an SDK
 * retry of the same call (a slow answer on a loaded machine) is not counted twice.
 */
const callsSince = (from: number) => new Set(listRequests().slice(from)).size;

function scopeOf(patterns: readonly string[]): AccessScope {
  return resolveAccess('acme', caller, [{ name: 'g', match: {}, allow: [{ source: BUCKET, uris: patterns }] }]);
}

/** Today's path: no narrowing, and as many source calls per page as it takes. */
function withoutNarrowing(scope: AccessScope): AccessScope {
  return { fingerprint: scope.fingerprint, allowsSource: scope.allowsSource, allows: scope.allows };
}

async function pagesOf(scope: AccessScope, maxSourceCallsPerPage = 10) {
  const service = createCatalog({
    tenantId: 'acme',
    sources: [source],
    cursors,
    pageSize: PAGE_SIZE,
    maxSourceCallsPerPage,
  }).forScope(scope);
  const pages: string[][] = [];
  const calls: number[] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard < 500; guard += 1) {
    const before = listCalls();
    const page = await service.listResources(cursor, signal);
    expect(page.unavailableSources).toBeUndefined();
    calls.push(callsSince(before));
    pages.push(page.resources.map((r) => r.uri));
    cursor = page.nextCursor;
    if (cursor === undefined) return { pages, calls };
  }
  throw new Error('listing did not end');
}

/** The oracle: the full walk filtered by the scope, cut into full pages. */
function expectedPages(scope: AccessScope): string[][] {
  const visible = everything.filter((uri) => scope.allows(BUCKET, uri));
  const pages: string[][] = [];
  for (let i = 0; i < visible.length; i += PAGE_SIZE) pages.push(visible.slice(i, i + PAGE_SIZE));
  return pages.length === 0 ? [[]] : pages;
}

/**
 * A listing whose last visible entry fills a page, with entries the caller may
 * not see after it in the listed range, ends with one empty page: the catalog
 * cannot know there is nothing more without asking (today's path does the same).
 */
function withoutTrailingEmptyPage(pages: string[][]): string[][] {
  return pages.length > 1 && pages.at(-1)!.length === 0 ? pages.slice(0, -1) : pages;
}

/** Whether each pattern's only wildcard ends it, so its range admits exactly what it grants. */
function trailingWildcardsOnly(patterns: readonly string[]): boolean {
  return patterns.every((p) => !p.replace(/\*+$/, '').includes('*'));
}

/** Backend calls follow the caller's view: at most one ListObjectsV2 per granted prefix per page, whatever the patterns' shape. */
function expectBoundedCalls(scope: AccessScope, listing: { calls: number[] }): void {
  const prefixes = scope.listingPrefixes?.(BUCKET) ?? [];
  for (const calls of listing.calls) expect(calls).toBeLessThanOrEqual(prefixes.length);
}

beforeAll(async () => {
  s3 = await startS3rver({ buckets: [BUCKET] });
  await putAll(s3.client, seedKeys());
  proxy = await startCountingProxy(s3.endpoint);
  const options = s3SourceOptionsSchema.parse({
    endpoint: proxy.endpoint,
    forcePathStyle: true,
    credentials: s3.credentials,
    bucket: BUCKET,
  });
  source = createS3Source(options, { sourceId: BUCKET, tenantId: 'acme', configDir: '/', logger: silentLogger });
  everything = (await pagesOf(unrestrictedScope, 1_000)).pages.flat();
}, 180_000);

afterAll(async () => {
  await source?.close();
  await proxy?.close();
  await s3?.close();
});

describe('S3 listing narrowed to the caller grants', () => {
  const cases: Array<[string, string[]]> = [
    ['one prefix', ['s3:///lake/p3/**']],
    ['two prefixes', ['s3:///lake/p1/sub/**', 's3:///lake/p6/**']],
    ['overlapping prefixes', ['s3:///lake/p2/**', 's3:///lake/p2/sub/*', 's3:///lake/p2*']],
    ['prefixes ending inside a name', ['s3:///lake/p5/sub/d*', 's3:///lake/p2*', 's3:///lake/p4/k000*']],
    ['a pattern with a wildcard inside a prefix', ['s3:///lake/p3/*.txt']],
    ['a pattern without a literal prefix', ['s3:///lake/p1/**', 's3:///lake/*/k0005*']],
    ['one level', ['s3:///lake/p3/*']],
    ['one level at the bucket root', ['s3:///lake/*']],
    ['literal keys and a literal folder', ['s3:///lake/p6/k0219.txt', 's3:///lake/p1/k0000.txt', 's3:///lake/p7/sub/']],
    ['a wildcard segment inside the pattern', ['s3:///lake/p5/*/x*', 's3:///lake/p*/sub/k0001.md']],
    ['a level under every folder of the root', ['s3:///lake/*/k0005.txt']],
  ];

  it.each(cases)('%s: same pages as the filtered full scan, bounded backend calls', async (_name, patterns) => {
    const scope = scopeOf(patterns);
    const narrowed = await pagesOf(scope);
    expect(narrowed.pages.flat()).toEqual(expectedPages(scope).flat());
    expect(narrowed.pages.flat().length).toBeGreaterThan(0);
    // Today's scan-and-filter under the same bounds: narrowing changes the cost, never the answer.
    const today = await pagesOf(withoutNarrowing(scope));
    expect(today.pages.flat()).toEqual(narrowed.pages.flat());
    if (scope.listingPrefixes?.(BUCKET) === undefined) expect(narrowed.pages).toEqual(today.pages);
    else expectBoundedCalls(scope, narrowed);
    if (trailingWildcardsOnly(patterns)) expect(withoutTrailingEmptyPage(narrowed.pages)).toEqual(expectedPages(scope));
  });

  it('lists a one-prefix grant of a large bucket in the first response, one backend call', async () => {
    const scope = scopeOf(['s3:///lake/p4/sub/**']);
    const { pages, calls } = await pagesOf(scope);
    expect(pages).toHaveLength(1);
    expect(pages[0]).toHaveLength(41); // the folder and its 40 objects
    expect(calls).toEqual([1]);
    // Today's path walks the bucket from its start instead.
    const unnarrowed = await pagesOf(withoutNarrowing(scope));
    expect(unnarrowed.calls.reduce((a, b) => a + b, 0)).toBeGreaterThan(10);
  });

  it('lists literal keys with one single-key call each, not the keys that share their start', async () => {
    const scope = scopeOf(['s3:///lake/p6/k0001.txt', 's3:///lake/p6/k0002.txt']);
    const before = listRequests().length;
    const { pages, calls } = await pagesOf(scope);
    expect(pages).toEqual([['s3:///lake/p6/k0001.txt', 's3:///lake/p6/k0002.txt']]);
    expect(calls).toEqual([2]);
    expect(
      listRequests()
        .slice(before)
        .every((r) => r.includes('max-keys=1&') || r.endsWith('max-keys=1')),
    ).toBe(true);
  });

  it('lists one level of a folder with the delimiter, not the keys below it', async () => {
    const scope = scopeOf(['s3:///lake/p5/sub/*']);
    const before = listRequests().length;
    const { pages, calls } = await pagesOf(scope);
    expect(pages).toEqual([expectedPages(scope).flat()]);
    expect(pages[0]).toHaveLength(1 + 40); // the folder (`*` matches nothing too) and its 40 objects, not deep/
    expect(calls).toEqual([1]);
    expect(listRequests().slice(before)[0]).toContain('delimiter=%2F');
  });

  it('costs no backend call for a grant that can match nothing of the source', async () => {
    const before = listCalls();
    const { pages } = await pagesOf(scopeOf(['s3:///other/**']));
    expect(pages).toEqual([[]]);
    expect(listCalls()).toBe(before);
    const empty = resolveAccess('acme', caller, [{ name: 'g', match: {}, allow: [{ source: BUCKET, uris: [] }] }]);
    expect((await pagesOf(empty)).pages).toEqual([[]]);
    expect(listCalls()).toBe(before);
  });

  it('matches the filtered full scan for any mix of grants (property)', async () => {
    const pool = [
      's3:///lake/p0/**',
      's3:///lake/p1/sub/**',
      's3:///lake/p2*',
      's3:///lake/p2/k01*',
      's3:///lake/p3/*.txt',
      's3:///lake/p5/sub/*/x*',
      's3:///lake/p6/k0219.txt',
      's3:///lake/p7/sub/',
      's3:///lake/z/**',
      's3:///lake/top*',
      's3:///lake/*/k0005.txt',
      's3:///lake/q/**',
    ];
    await fc.assert(
      fc.asyncProperty(fc.subarray(pool, { minLength: 1, maxLength: 4 }), async (patterns) => {
        const scope = scopeOf(patterns);
        const narrowed = await pagesOf(scope);
        if (scope.listingPrefixes?.(BUCKET) === undefined) {
          expect(narrowed.pages).toEqual((await pagesOf(withoutNarrowing(scope))).pages);
        } else {
          expect(narrowed.pages.flat()).toEqual(expectedPages(scope).flat());
          if (trailingWildcardsOnly(patterns)) {
            expect(withoutTrailingEmptyPage(narrowed.pages)).toEqual(expectedPages(scope));
          }
          expectBoundedCalls(scope, narrowed);
        }
      }),
      { numRuns: 25 },
    );
  }, 120_000);
});

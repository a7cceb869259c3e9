import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal, Source } from '@mcpgw/core';
import { silentLogger, unrestrictedScope } from '@mcpgw/core';
import { createCatalog } from '@mcpgw/catalog';
import { resolveAccess } from '@mcpgw/policy';
import { createCursorCodec } from '@mcpgw/protocol';
import { filesSourceFactory } from '@mcpgw/source-files';

// A files source pages through a tree of any size (a resumable
// sorted walk, no cut at 10,000 entries), and a caller granted one subfolder
// of a large tree gets it in one request.

const FOLDERS = 50;
const PER_FOLDER = 1_000;
const signal = new AbortController().signal;
const cursors = createCursorCodec({ key: Buffer.from('f'.repeat(32)) });
const caller: Principal = { issuer: 'https://idp', subject: 'ann', scopes: [], groups: [], expiresAt: 0 };
const folderName = (i: number) => `f${String(i).padStart(2, '0')}`;
const fileName = (i: number) => `n${String(i).padStart(4, '0')}.txt`;

let root: string;
let source: Source;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'mcpgw-pushdown-'));
  for (let f = 0; f < FOLDERS; f += 1) {
    mkdirSync(join(root, folderName(f)));
    for (let i = 0; i < PER_FOLDER; i += 1) writeFileSync(join(root, folderName(f), fileName(i)), '');
  }
  mkdirSync(join(root, 'granted'));
  for (let i = 0; i < 5; i += 1) writeFileSync(join(root, 'granted', fileName(i)), 'x');
  const options = await filesSourceFactory.optionsSchema['~standard'].validate({ root });
  if (options.issues !== undefined) throw new Error('invalid options');
  source = await filesSourceFactory.create(options.value, {
    sourceId: 'docs',
    tenantId: 'acme',
    configDir: '/',
    logger: silentLogger,
  });
}, 120_000);

afterAll(async () => {
  await source?.close();
  if (root !== undefined) await rm(root, { recursive: true, force: true });
});

describe('files listing of a large tree', () => {
  it('reaches every one of 50,000 entries by paging, in walk order, none twice', async () => {
    const uris: string[] = [];
    let position: string | undefined;
    let pages = 0;
    do {
      const page = await source.listResources(position === undefined ? { limit: 1_000 } : { limit: 1_000, position });
      expect(page.incomplete).toBeUndefined();
      uris.push(...page.items.map((r) => r.uri));
      position = page.nextPosition;
      pages += 1;
    } while (position !== undefined && pages < 200);
    const expected = ['file:///docs/'];
    for (let f = 0; f < FOLDERS; f += 1) {
      expected.push(`file:///docs/${folderName(f)}/`);
      for (let i = 0; i < PER_FOLDER; i += 1) expected.push(`file:///docs/${folderName(f)}/${fileName(i)}`);
    }
    expected.push(
      'file:///docs/granted/',
      ...Array.from({ length: 5 }, (_, i) => `file:///docs/granted/${fileName(i)}`),
    );
    expect(uris).toEqual(expected);
  }, 120_000);

  it('lists a granted subfolder in one request, however much else the tree holds', async () => {
    const scope = resolveAccess('acme', caller, [
      { name: 'g', match: {}, allow: [{ source: 'docs', uris: ['file:///docs/granted/**'] }] },
    ]);
    const service = createCatalog({ tenantId: 'acme', sources: [source], cursors }).forScope(scope);
    const page = await service.listResources(undefined, signal);
    expect(page.resources.map((r) => r.uri)).toEqual([
      'file:///docs/granted/',
      ...Array.from({ length: 5 }, (_, i) => `file:///docs/granted/${fileName(i)}`),
    ]);
    expect(page.nextCursor).toBeUndefined();
  });

  /** The catalog over the files source for `patterns`, counting the source's listing calls per page. */
  async function listGranted(patterns: string[]) {
    const scope = resolveAccess('acme', caller, [
      { name: 'g', match: {}, allow: [{ source: 'docs', uris: patterns }] },
    ]);
    let calls = 0;
    const counting: Source = {
      ...source,
      listResources: (page, pageSignal) => {
        calls += 1;
        return source.listResources(page, pageSignal);
      },
    };
    const service = createCatalog({ tenantId: 'acme', sources: [counting], cursors }).forScope(scope);
    const pages: string[][] = [];
    const callsPerPage: number[] = [];
    let cursor: string | undefined;
    do {
      const before = calls;
      const page = await service.listResources(cursor, signal);
      pages.push(page.resources.map((r) => r.uri));
      callsPerPage.push(calls - before);
      cursor = page.nextCursor;
    } while (cursor !== undefined && pages.length < 100);
    return { pages, callsPerPage };
  }

  it('lists one level and one file of large folders in one request, one source call', async () => {
    const { pages, callsPerPage } = await listGranted(['file:///docs/granted/*', 'file:///docs/f07/n0999.txt']);
    expect(pages).toEqual([
      [
        `file:///docs/f07/${fileName(999)}`,
        'file:///docs/granted/',
        ...Array.from({ length: 5 }, (_, i) => `file:///docs/granted/${fileName(i)}`),
      ],
    ]);
    expect(callsPerPage).toEqual([1]);
  });

  it('passes over what a wildcard inside a level does not grant: one source call per page', async () => {
    const { pages, callsPerPage } = await listGranted(['file:///docs/*/n0001.txt']);
    const expected = [
      ...Array.from({ length: FOLDERS }, (_, f) => `file:///docs/${folderName(f)}/${fileName(1)}`),
      `file:///docs/granted/${fileName(1)}`,
    ];
    expect(pages.flat()).toEqual(expected);
    expect(callsPerPage.every((calls) => calls === 1)).toBe(true);
    // Each page examines up to 10,000 entries of the 51,000 the range reaches.
    expect(pages.length).toBeLessThanOrEqual(Math.ceil((FOLDERS * (PER_FOLDER + 1) + 6) / 10_000));
  }, 60_000);

  it('keeps the unrestricted first page to one page of work', async () => {
    const service = createCatalog({ tenantId: 'acme', sources: [source], cursors }).forScope(unrestrictedScope);
    const page = await service.listResources(undefined, signal);
    expect(page.resources).toHaveLength(100);
    expect(page.resources[1]?.uri).toBe('file:///docs/f00/');
    expect(page.nextCursor).toBeDefined();
  });
});

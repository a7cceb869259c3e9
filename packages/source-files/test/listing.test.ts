import { rm, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSource, gatewayErrorOf, listAll, tempDir, writeTree } from './helpers.js';

/** A tree whose walk order differs from a plain string sort of its paths. */
async function orderTree(): Promise<string> {
  const root = await tempDir();
  await writeTree(root, {
    'b.txt': 'b',
    'a/x.txt': 'x',
    'a/c/deep.txt': 'deep',
    'a-b.txt': 'a-b',
    'B.txt': 'capital B',
    'z/.hidden-in-z': 'h',
    '.env': 'SECRET=1',
    '.git/config': '[core]',
  });
  return root;
}

describe('listing order', () => {
  it('is a depth-first walk with each folder before its contents, siblings by code unit', async () => {
    const root = await orderTree();
    const source = await createSource({ root }, '/');
    const { items } = await listAll(source, 100);
    expect(items.map((r) => r.uri)).toEqual([
      'file:///docs/',
      'file:///docs/B.txt',
      'file:///docs/a/',
      'file:///docs/a/c/',
      'file:///docs/a/c/deep.txt',
      'file:///docs/a/x.txt',
      'file:///docs/a-b.txt',
      'file:///docs/b.txt',
      'file:///docs/z/',
    ]);
  });

  it('is the same on every call', async () => {
    const root = await orderTree();
    const source = await createSource({ root }, '/');
    const first = await listAll(source, 100);
    const second = await listAll(source, 3);
    expect(second.items).toEqual(first.items);
  });

  it('leaves out dot-files and dot-folders', async () => {
    const root = await orderTree();
    const source = await createSource({ root }, '/');
    const uris = (await listAll(source, 100)).items.map((r) => r.uri);
    expect(uris.filter((u) => u.includes('/.') || u.includes('hidden') || u.includes('env'))).toEqual([]);
  });
});

describe('pagination', () => {
  async function bigTree(): Promise<string> {
    const root = await tempDir();
    const files: Record<string, string> = {};
    for (let i = 0; i < 40; i += 1) files[`dir${i % 4}/sub${i % 3}/file-${String(i).padStart(2, '0')}.txt`] = `${i}`;
    for (let i = 0; i < 7; i += 1) files[`top-${i}.md`] = `# Top ${i}\n`;
    await writeTree(root, files);
    return root;
  }

  it('pages through everything without gaps or duplicates', async () => {
    const root = await bigTree();
    const source = await createSource({ root }, '/');
    const all = await listAll(source, 1000);
    expect(all.pages).toBe(1);
    // 1 root + 4 dirs + 12 subdirs + 40 files + 7 top files
    expect(all.items).toHaveLength(64);
    for (const limit of [1, 5, 7, 63]) {
      const paged = await listAll(source, limit);
      expect(paged.pages, `limit ${limit}`).toBe(Math.ceil(64 / limit));
      expect(paged.items, `limit ${limit}`).toEqual(all.items);
    }
  });

  it('resumes after the last path, so a removal between pages shifts nothing', async () => {
    const root = await bigTree();
    const source = await createSource({ root }, '/');
    const all = (await listAll(source, 1000)).items.map((r) => r.uri);
    const first = await source.listResources({ limit: 10 });
    // Remove an entry already listed and one not yet listed.
    await rm(join(root, 'dir0/sub0/file-00.txt'));
    await rm(join(root, 'top-6.md'));
    const rest: string[] = [];
    let position = first.nextPosition;
    for (let i = 0; position !== undefined && i < 100; i += 1) {
      const page = await source.listResources({ limit: 10, position });
      rest.push(...page.items.map((r) => r.uri));
      position = page.nextPosition;
    }
    const seen = [...first.items.map((r) => r.uri), ...rest];
    expect(seen).toEqual(all.filter((u) => !u.endsWith('top-6.md')));
  });

  it.each(['', 'dir0', '/dir0//sub0', '/../etc', '/.git', '/a\\b', '/a\u0000b'])(
    'refuses the position %j with MCPGW_CURSOR_INVALID',
    async (position) => {
      const root = await bigTree();
      const source = await createSource({ root }, '/');
      const error = await gatewayErrorOf(source.listResources({ limit: 10, position }));
      expect(error.code).toBe('MCPGW_CURSOR_INVALID');
    },
  );

  it('lists a folder larger than maxEntries up to that many and says the listing is incomplete', async () => {
    const root = await tempDir();
    const files: Record<string, string> = { 'small/a.txt': 'a', 'small/b.txt': 'b' };
    for (let i = 0; i < 8; i += 1) files[`big/f${i}.txt`] = `${i}`;
    await writeTree(root, files);
    const source = await createSource({ root, maxEntries: 5 }, '/');
    const pages = [];
    let position: string | undefined;
    do {
      const page = await source.listResources(position === undefined ? { limit: 3 } : { limit: 3, position });
      pages.push(page);
      position = page.nextPosition;
    } while (position !== undefined);
    const uris = pages.flatMap((p) => p.items.map((r) => r.uri));
    // Which five of the eight depends on the order the OS returns names in.
    expect(uris.filter((u) => u.startsWith('file:///docs/big/f'))).toHaveLength(5);
    expect(uris.filter((u) => u.startsWith('file:///docs/small/'))).toEqual([
      'file:///docs/small/',
      'file:///docs/small/a.txt',
      'file:///docs/small/b.txt',
    ]);
    // Every page that read the cut folder says so; the last page (only `small`) does not.
    expect(pages.some((p) => p.incomplete === true)).toBe(true);
    expect(pages.at(-1)?.incomplete).toBeUndefined();
  });
});

describe('descriptors', () => {
  it('describe files with name, media type, size and lastModified', async () => {
    const root = await tempDir();
    await writeTree(root, {
      'notes.txt': 'héllo',
      'data.json': '{}',
      'pic.png': Buffer.from([0x89, 0x50, 0x4e, 0x47]),
      'main.ts': 'export {};',
      README: 'no extension',
    });
    await utimes(join(root, 'notes.txt'), new Date('2025-01-12T15:00:58Z'), new Date('2025-01-12T15:00:58Z'));
    const source = await createSource({ root }, '/');
    const { items } = await listAll(source, 100);
    expect(items.find((r) => r.name === 'notes.txt')).toEqual({
      uri: 'file:///docs/notes.txt',
      name: 'notes.txt',
      mimeType: 'text/plain',
      size: 6,
      annotations: { lastModified: '2025-01-12T15:00:58.000Z' },
    });
    const types = Object.fromEntries(items.map((r) => [r.name, r.mimeType]));
    expect(types).toMatchObject({
      'data.json': 'application/json',
      'pic.png': 'image/png',
      'main.ts': 'text/x-typescript',
      README: 'application/octet-stream',
    });
  });

  it('describe folders with a trailing-slash URI, inode/directory and the read bounds', async () => {
    const root = await tempDir();
    await writeTree(root, { 'policies/a.txt': 'a' });
    const source = await createSource({ root, directoryRead: { maxFiles: 3 } }, '/');
    const { items } = await listAll(source, 100);
    const folders = items.filter((r) => r.mimeType === 'inode/directory');
    expect(folders.map((r) => [r.uri, r.name])).toEqual([
      ['file:///docs/', 'docs'],
      ['file:///docs/policies/', 'policies'],
    ]);
    expect(folders[1]?.description).toContain('"policies/"');
    expect(folders[1]?.description).toContain('at most 3 files and 5 MiB');
    expect(folders[1]?.annotations?.lastModified).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('take a markdown title and description from front matter, else from the first heading', async () => {
    const root = await tempDir();
    await writeTree(root, {
      'with-front-matter.md': '---\ntitle: Leave and holidays\ndescription: How to request leave.\n---\n# Other\n',
      'heading-only.md': 'Intro line\n\n# Working hours   \n\ntext\n',
      'bad-yaml.md': '---\ntitle: [unclosed\n---\n# Fallback title\n',
      'plain.md': 'no heading at all\n',
    });
    const source = await createSource({ root }, '/');
    const byName = Object.fromEntries((await listAll(source, 100)).items.map((r) => [r.name, r]));
    expect(byName['with-front-matter.md']).toMatchObject({
      title: 'Leave and holidays',
      description: 'How to request leave.',
      mimeType: 'text/markdown',
    });
    expect(byName['heading-only.md']?.title).toBe('Working hours');
    expect(byName['heading-only.md']).not.toHaveProperty('description');
    expect(byName['bad-yaml.md']?.title).toBe('Fallback title');
    expect(byName['plain.md']).not.toHaveProperty('title');
  });

  it('reads only the first 4 KiB of a markdown file for its title', async () => {
    const root = await tempDir();
    await writeTree(root, {
      'late.md': `${'filler line\n'.repeat(400)}# Too late\n`,
      'long-front-matter.md': `---\ntitle: Never closed in time\nnotes: "${'x'.repeat(5000)}"\n---\n# Heading\n`,
    });
    const source = await createSource({ root }, '/');
    const byName = Object.fromEntries((await listAll(source, 100)).items.map((r) => [r.name, r]));
    expect(byName['late.md']).not.toHaveProperty('title');
    expect(byName['long-front-matter.md']).not.toHaveProperty('title');
  });
});

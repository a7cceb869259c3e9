import { execFileSync } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSource, gatewayErrorOf, listAll, tempDir, textOf, writeTree } from './helpers.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGOQm/AfAAJ9Aa5x8yHNAAAAAElFTkSuQmCC',
  'base64',
);

describe('reading a file', () => {
  it('returns a text file as text with its media type', async () => {
    const root = await tempDir();
    await writeTree(root, { 'guide/intro.md': '# Intro\n\nWelcome — ünïcödé 😀\n' });
    const source = await createSource({ root }, '/');
    expect(await source.read('file:///docs/guide/intro.md')).toEqual([
      { uri: 'file:///docs/guide/intro.md', mimeType: 'text/markdown', text: '# Intro\n\nWelcome — ünïcödé 😀\n' },
    ]);
  });

  it('returns a binary file as a base64 blob holding the same bytes', async () => {
    const root = await tempDir();
    await writeTree(root, { 'pixel.png': PNG });
    const source = await createSource({ root }, '/');
    const contents = await source.read('file:///docs/pixel.png');
    expect(contents).toEqual([{ uri: 'file:///docs/pixel.png', mimeType: 'image/png', blob: PNG.toString('base64') }]);
  });

  it('returns a text-typed file that is not UTF-8 as a blob, not as mangled text', async () => {
    const root = await tempDir();
    const latin1 = Buffer.from('caf\xe9', 'latin1');
    await writeTree(root, { 'menu.txt': latin1 });
    const source = await createSource({ root }, '/');
    expect(await source.read('file:///docs/menu.txt')).toEqual([
      { uri: 'file:///docs/menu.txt', mimeType: 'text/plain', blob: latin1.toString('base64') },
    ]);
  });

  it('reads names with spaces, unicode and URI delimiters through the listed URIs', async () => {
    const root = await tempDir();
    const names = ['annual report.txt', 'über café.txt', 'q?a#b%c.txt', '日本語.txt', "it's (1)+[x].txt"];
    await writeTree(root, Object.fromEntries(names.map((n) => [`sub dir/${n}`, `content of ${n}`])));
    const source = await createSource({ root }, '/');
    const files = (await listAll(source, 100)).items.filter((r) => r.mimeType === 'text/plain');
    expect(files.map((r) => r.name).sort()).toEqual([...names].sort());
    for (const file of files) {
      expect(file.uri).not.toMatch(/[ ?#]/);
      expect(textOf(await source.read(file.uri))).toBe(`content of ${file.name}`);
    }
    expect(files.find((r) => r.name === 'annual report.txt')?.uri).toBe('file:///docs/sub%20dir/annual%20report.txt');
  });

  it('refuses a file over maxFileBytes with MCPGW_RESOURCE_TOO_LARGE naming the limit', async () => {
    const root = await tempDir();
    await writeTree(root, { 'big.txt': 'x'.repeat(2049), 'fits.txt': 'x'.repeat(2048) });
    const source = await createSource({ root, maxFileBytes: 2048 }, '/');
    const error = await gatewayErrorOf(source.read('file:///docs/big.txt'));
    expect(error.code).toBe('MCPGW_RESOURCE_TOO_LARGE');
    expect(error.message).toBe('The file exceeds the 2 KiB (2048 bytes) size limit of this source');
    expect(textOf(await source.read('file:///docs/fits.txt'))).toHaveLength(2048);
  });

  it('reports a missing file, a file read as a folder and a folder read as a file as not found', async () => {
    const root = await tempDir();
    await writeTree(root, { 'a.txt': 'a', 'sub/b.txt': 'b' });
    const source = await createSource({ root }, '/');
    for (const uri of [
      'file:///docs/missing.txt',
      'file:///docs/a.txt/',
      'file:///docs/sub',
      'file:///docs/sub/missing/',
    ]) {
      expect(await source.read(uri), uri).toBeUndefined();
    }
  });

  it('lists and reads nothing for a FIFO, and does not hang on it', async () => {
    const root = await tempDir();
    await writeTree(root, { 'a.txt': 'a' });
    execFileSync('mkfifo', [join(root, 'pipe.txt')]);
    const source = await createSource({ root }, '/');
    expect((await listAll(source, 100)).items.map((r) => r.name)).toEqual(['docs', 'a.txt']);
    expect(await source.read('file:///docs/pipe.txt')).toBeUndefined();
    expect((await source.read('file:///docs/'))?.map((c) => c.uri)).toEqual(['file:///docs/a.txt']);
  });
});

describe('reading a folder', () => {
  async function folderTree(): Promise<string> {
    const root = await tempDir();
    await writeTree(root, {
      'top.txt': 'top',
      'policies/b.json': '{"b":1}',
      'policies/a.md': '# A',
      'policies/c.png': PNG,
      'policies/nested/deep.txt': 'not included',
    });
    return root;
  }

  it('returns the direct files in name order, each with its own URI, not recursing', async () => {
    const source = await createSource({ root: await folderTree() }, '/');
    expect(await source.read('file:///docs/policies/')).toEqual([
      { uri: 'file:///docs/policies/a.md', mimeType: 'text/markdown', text: '# A' },
      { uri: 'file:///docs/policies/b.json', mimeType: 'application/json', text: '{"b":1}' },
      { uri: 'file:///docs/policies/c.png', mimeType: 'image/png', blob: PNG.toString('base64') },
    ]);
  });

  it('reads the root folder', async () => {
    const source = await createSource({ root: await folderTree() }, '/');
    expect((await source.read('file:///docs/'))?.map((c) => c.uri)).toEqual(['file:///docs/top.txt']);
  });

  it('stops at directoryRead.maxFiles', async () => {
    const source = await createSource({ root: await folderTree(), directoryRead: { maxFiles: 2 } }, '/');
    expect((await source.read('file:///docs/policies/'))?.map((c) => c.uri)).toEqual([
      'file:///docs/policies/a.md',
      'file:///docs/policies/b.json',
    ]);
  });

  it('stops at the first file past directoryRead.maxTotalBytes', async () => {
    const root = await tempDir();
    const forty = 'x'.repeat(40);
    await writeTree(root, { 'f/1.txt': forty, 'f/2.txt': forty, 'f/2b.txt': forty, 'f/3.txt': 'x' });
    const source = await createSource({ root, directoryRead: { maxTotalBytes: 100 } }, '/');
    // 1 and 2 fit (80 bytes), 2b would pass 100; 3 would fit, but reading stops at the first file past the bound.
    expect((await source.read('file:///docs/f/'))?.map((c) => c.uri)).toEqual([
      'file:///docs/f/1.txt',
      'file:///docs/f/2.txt',
    ]);
  });

  it('leaves out files over maxFileBytes and keeps going', async () => {
    const root = await tempDir();
    await writeTree(root, { 'f/a.txt': 'a', 'f/b.txt': 'x'.repeat(5000), 'f/c.txt': 'c' });
    const source = await createSource({ root, maxFileBytes: 4096 }, '/');
    expect((await source.read('file:///docs/f/'))?.map((c) => c.uri)).toEqual([
      'file:///docs/f/a.txt',
      'file:///docs/f/c.txt',
    ]);
  });

  it('returns an empty contents array for an existing folder without files', async () => {
    const root = await tempDir();
    await mkdir(join(root, 'empty/child'), { recursive: true });
    const source = await createSource({ root }, '/');
    expect(await source.read('file:///docs/empty/')).toEqual([]);
    expect(await source.read('file:///docs/gone/')).toBeUndefined();
  });
});

describe('health and startup', () => {
  it('is healthy while the root exists, and says so when it goes', async () => {
    const root = await tempDir();
    const source = await createSource({ root }, '/');
    expect(await source.health()).toEqual({ ok: true });
    await rm(root, { recursive: true });
    const health = await source.health();
    expect(health.ok).toBe(false);
    expect(health.detail).not.toContain(root);
  });

  it('fails listing with MCPGW_SOURCE_UNAVAILABLE naming the source, never the path, when the root goes', async () => {
    const root = await tempDir();
    await writeTree(root, { 'a.txt': 'a' });
    const source = await createSource({ root }, '/');
    await rm(root, { recursive: true });
    const error = await gatewayErrorOf(source.listResources({ limit: 10 }));
    expect(error.code).toBe('MCPGW_SOURCE_UNAVAILABLE');
    expect(error.message).toBe('Source "docs" could not list its folder');
    expect(String((error.cause as Error).message)).toBe('file system error ENOENT');
    expect(await source.read('file:///docs/a.txt')).toBeUndefined();
  });

  it('fails startup for a missing root, naming the option but not the absolute path', async () => {
    const dir = await tempDir();
    await expect(createSource({ root: 'no-such-folder' }, dir)).rejects.toThrow(
      new Error(
        'source "docs": root "no-such-folder" (relative paths start at the config file\'s folder) does not exist',
      ),
    );
  });

  it('fails startup for a root that is a file', async () => {
    const dir = await tempDir();
    await writeTree(dir, { 'file.txt': 'x' });
    await expect(createSource({ root: 'file.txt' }, dir)).rejects.toThrow(/root "file\.txt" .* is not a folder$/);
  });

  it('resolves a relative root against the config folder', async () => {
    const dir = await tempDir();
    await writeTree(dir, { 'corpus/a.txt': 'from corpus' });
    const source = await createSource({ root: './corpus' }, dir);
    expect(textOf(await source.read('file:///docs/a.txt'))).toBe('from corpus');
  });
});

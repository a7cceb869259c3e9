import { mkdir, readFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Source } from '@mcpgw/core';
import { createSource, listAll, tempDir, textOf, writeTree } from './helpers.js';

// MCP 2026-07-28, Resources, Security Considerations: "Servers MUST sanitize file
// paths to prevent directory traversal attacks when serving file://
// resources". Every case reads as "not found" (undefined → -32602), never an
// error, and never returns the secret.

const SECRET = 'TOP SECRET: outside the root';
let base: string;
let source: Source;

beforeEach(async () => {
  base = await tempDir();
  const root = join(base, 'root');
  await writeTree(base, {
    'outside/secret.txt': SECRET,
    'outside/dir/secret.txt': SECRET,
    'root/a.txt': 'a',
    'root/sub/b.txt': 'b',
    'root/.hidden.txt': SECRET,
    'root/.private/key.txt': SECRET,
  });
  await symlink('../outside/secret.txt', join(root, 'link-out.txt'));
  await symlink(join(base, 'outside/secret.txt'), join(root, 'link-absolute.txt'));
  await symlink('../outside/dir', join(root, 'link-out-dir'));
  await symlink('../../outside/dir', join(root, 'sub/link-out-dir'));
  await symlink('sub/b.txt', join(root, 'link-in.txt'));
  await symlink('sub', join(root, 'link-in-dir'));
  await symlink('.hidden.txt', join(root, 'link-hidden.txt'));
  await symlink('.private/key.txt', join(root, 'link-private.txt'));
  await symlink('loop-b', join(root, 'loop-a'));
  await symlink('loop-a', join(root, 'loop-b'));
  await symlink('missing.txt', join(root, 'dangling.txt'));
  await mkdir(join(root, 'empty'));
  source = await createSource({ root }, base);
});

const cases: Array<[string, string]> = [
  ['a raw .. segment', 'file:///docs/../outside/secret.txt'],
  ['a .. segment below a folder', 'file:///docs/sub/../../outside/secret.txt'],
  ['a .. segment naming a folder', 'file:///docs/sub/../'],
  ['a . segment', 'file:///docs/./a.txt'],
  ['percent-encoded dots, lowercase', 'file:///docs/%2e%2e/outside/secret.txt'],
  ['percent-encoded dots, uppercase', 'file:///docs/%2E%2E/outside/secret.txt'],
  ['a half-encoded dot pair', 'file:///docs/.%2e/outside/secret.txt'],
  ['an encoded slash inside a segment', 'file:///docs/%2e%2e%2Foutside%2Fsecret.txt'],
  ['an encoded slash between names', 'file:///docs/sub%2Fb.txt'],
  ['a raw backslash', 'file:///docs/..\\outside\\secret.txt'],
  ['an encoded backslash', 'file:///docs/..%5Coutside%5Csecret.txt'],
  ['an encoded backslash between names', 'file:///docs/sub%5Cb.txt'],
  ['an encoded NUL', 'file:///docs/a.txt%00'],
  ['an encoded NUL before an extension', 'file:///docs/a.txt%00.png'],
  ['a raw NUL', 'file:///docs/a.txt\u0000'],
  ['an encoded newline', 'file:///docs/a%0A.txt'],
  ['an encoded DEL', 'file:///docs/a%7F.txt'],
  ['a double slash', 'file:///docs//a.txt'],
  ['a double slash in the middle', 'file:///docs/sub//b.txt'],
  ['an absolute path after the prefix', 'file:///docs//etc/passwd'],
  ['an encoded absolute path', 'file:///docs/%2Fetc%2Fpasswd'],
  ['an absolute path outside the source', 'file:///etc/passwd'],
  ['a malformed percent-encoding', 'file:///docs/%E0%A4%A.txt'],
  ['invalid UTF-8', 'file:///docs/%FF.txt'],
  ['a non-canonical encoding of a plain name', 'file:///docs/%61.txt'],
  ['a query', 'file:///docs/a.txt?x=1'],
  ['a fragment', 'file:///docs/a.txt#x'],
  ['a hidden file', 'file:///docs/.hidden.txt'],
  ['a file in a hidden folder', 'file:///docs/.private/key.txt'],
  ['a hidden folder', 'file:///docs/.private/'],
  ['a file symlink to outside the root', 'file:///docs/link-out.txt'],
  ['a file symlink with an absolute target outside', 'file:///docs/link-absolute.txt'],
  ['a folder symlink to outside the root', 'file:///docs/link-out-dir/'],
  ['a file through a folder symlink to outside', 'file:///docs/link-out-dir/secret.txt'],
  ['a file through a nested folder symlink to outside', 'file:///docs/sub/link-out-dir/secret.txt'],
  ['a folder symlink inside the root (an alias)', 'file:///docs/link-in-dir/'],
  ['a file through a folder symlink inside the root', 'file:///docs/link-in-dir/b.txt'],
  ['a file symlink to a hidden file', 'file:///docs/link-hidden.txt'],
  ['a file symlink into a hidden folder', 'file:///docs/link-private.txt'],
  ['a symlink loop', 'file:///docs/loop-a'],
  ['a dangling symlink', 'file:///docs/dangling.txt'],
  ['another source id', 'file:///other/a.txt'],
  ['the source id without a slash', 'file:///docs'],
];

describe('traversal attempts read as not found', () => {
  it('(the fixture: every outside link really reaches the secret on disk)', async () => {
    for (const path of [
      'link-out.txt',
      'link-absolute.txt',
      'link-out-dir/secret.txt',
      'sub/link-out-dir/secret.txt',
    ]) {
      expect(await readFile(join(base, 'root', path), 'utf8'), path).toBe(SECRET);
    }
  });

  it.each(cases)('%s: %s', async (_why, uri) => {
    const contents = await source.read(uri);
    expect(contents).toBeUndefined();
  });
});

describe('symlinks in listings and folder reads', () => {
  it('lists only symlinks to servable files inside the root, as files', async () => {
    const { items } = await listAll(source, 100);
    expect(items.map((r) => r.uri)).toEqual([
      'file:///docs/',
      'file:///docs/a.txt',
      'file:///docs/empty/',
      'file:///docs/link-in.txt',
      'file:///docs/sub/',
      'file:///docs/sub/b.txt',
    ]);
    expect(JSON.stringify(items)).not.toContain(base);
  });

  it('reads a symlink to a file inside the root', async () => {
    expect(textOf(await source.read('file:///docs/link-in.txt'))).toBe('b');
  });

  it('never includes a file behind an outside symlink in a folder read', async () => {
    const contents = await source.read('file:///docs/');
    expect(contents?.map((c) => c.uri)).toEqual(['file:///docs/a.txt', 'file:///docs/link-in.txt']);
    expect(JSON.stringify(contents)).not.toContain(SECRET);
    expect(await source.read('file:///docs/sub/')).toEqual([
      { uri: 'file:///docs/sub/b.txt', mimeType: 'text/plain', text: 'b' },
    ]);
  });

  it('still owns the URIs it refuses, so no other source answers for them', () => {
    expect(source.owns('file:///docs/../outside/secret.txt')).toBe(true);
    expect(source.owns('file:///other/a.txt')).toBe(false);
  });
});

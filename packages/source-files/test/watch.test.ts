import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SourceChange } from '@mcpgw/core';
import { createSource, listAll, tempDir, writeTree } from './helpers.js';

/** Resolves when `events` holds at least `count` entries, or after `ms`. */
async function waitFor(events: unknown[], count: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (events.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
}

describe('watch', () => {
  it('reports list-changed once for a burst of changes, including in new subfolders', async () => {
    const root = await tempDir();
    await writeTree(root, { 'a.txt': 'a' });
    const source = await createSource({ root }, '/');
    const events: SourceChange[] = [];
    const stop = source.watch?.((change) => events.push(change));
    expect(stop).toBeTypeOf('function');
    await new Promise((r) => setTimeout(r, 100)); // let the watcher attach
    await writeTree(root, { 'b.txt': 'b', 'c.txt': 'c', 'new/d.txt': 'd' });
    await waitFor(events, 1, 3_000);
    await new Promise((r) => setTimeout(r, 400));
    expect(events).toEqual([{ type: 'list-changed' }]);

    await writeFile(join(root, 'new/e.txt'), 'e');
    await waitFor(events, 2, 3_000);
    expect(events).toEqual([{ type: 'list-changed' }, { type: 'list-changed' }]);
    stop?.();
  });

  it('lets the next listing see a change at once, not after the walk reuse window', async () => {
    const root = await tempDir();
    await writeTree(root, { 'a.txt': 'a' });
    const source = await createSource({ root }, '/');
    const events: SourceChange[] = [];
    const stop = source.watch?.((change) => events.push(change));
    await new Promise((r) => setTimeout(r, 100));
    expect((await listAll(source, 100)).items.map((r) => r.name)).toEqual(['docs', 'a.txt']);
    await writeTree(root, { 'b.txt': 'b' });
    // Without a watcher, the walk just made would serve listings for WALK_REUSE_MS.
    expect((await listAll(source, 100)).items.map((r) => r.name)).toEqual(['docs', 'a.txt']);
    await waitFor(events, 1, 3_000);
    expect((await listAll(source, 100)).items.map((r) => r.name)).toEqual(['docs', 'a.txt', 'b.txt']);
    stop?.();
  });

  it('ignores changes under hidden names and stops after unsubscribing', async () => {
    const root = await tempDir();
    await writeTree(root, { 'a.txt': 'a' });
    const source = await createSource({ root }, '/');
    const events: SourceChange[] = [];
    const stop = source.watch?.((change) => events.push(change));
    await new Promise((r) => setTimeout(r, 100));
    await writeTree(root, { '.git/index': 'x', '.env': 'x' });
    await new Promise((r) => setTimeout(r, 600));
    expect(events).toEqual([]);
    stop?.();
    await writeTree(root, { 'visible.txt': 'x' });
    await new Promise((r) => setTimeout(r, 600));
    expect(events).toEqual([]);
  });
});

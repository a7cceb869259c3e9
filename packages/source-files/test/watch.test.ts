import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SourceChange } from '@mcpgw/core';
import { createSource, listAll, tempDir, writeTree } from './helpers.js';

const updated = (path: string): SourceChange => ({ type: 'resource-updated', uri: `file:///docs/${path}` });
/** A folder that reads differently only because files in it changed: it names them. */
const shows = (path: string, ...because: string[]): SourceChange => ({
  type: 'resource-updated',
  uri: `file:///docs/${path}`,
  because: because.map((member) => `file:///docs/${member}`),
});
const listChanges = (events: SourceChange[]) => events.filter((e) => e.type === 'list-changed');

/** A source over a new folder holding `tree`, watched by a listener that records, once the baseline is taken. */
async function watched(tree: Record<string, string>) {
  const root = await tempDir();
  await writeTree(root, tree);
  const source = await createSource({ root }, '/');
  const events: SourceChange[] = [];
  const stop = source.watch?.((change) => events.push(change));
  expect(stop).toBeTypeOf('function');
  await source.settled?.();
  return { root, source, events, stop: stop! };
}

describe('watch', () => {
  it('reports list-changed once for a burst of changes, including in new subfolders', async () => {
    const { root, source, events, stop } = await watched({ 'a.txt': 'a' });
    await writeTree(root, { 'b.txt': 'b', 'c.txt': 'c', 'new/d.txt': 'd' });
    await source.settled?.();
    // One list change, naming what came.
    expect(listChanges(events)).toEqual([
      { type: 'list-changed', uris: ['b.txt', 'c.txt', 'new/', 'new/d.txt'].map((path) => `file:///docs/${path}`) },
    ]);
    // What came, and the folders whose reads changed with it (a new folder changed itself).
    for (const path of ['b.txt', 'c.txt', 'new/', 'new/d.txt']) expect(events).toContainEqual(updated(path));
    expect(events).toContainEqual(shows('', 'b.txt', 'c.txt', 'new/'));
    expect(events).not.toContainEqual(updated('a.txt'));

    events.length = 0;
    await writeFile(join(root, 'new/e.txt'), 'e');
    await source.settled?.();
    expect(listChanges(events)).toHaveLength(1);
    expect(events).toContainEqual(updated('new/e.txt'));

    // A changed file is an update, not a list change.
    events.length = 0;
    await writeFile(join(root, 'a.txt'), 'longer now');
    await source.settled?.();
    expect(events).toEqual([shows('', 'a.txt'), updated('a.txt')]);
    stop();
  });

  it('lets the next listing see a change at once, not after the walk reuse window', async () => {
    const { root, source, events, stop } = await watched({ 'a.txt': 'a' });
    expect((await listAll(source, 100)).items.map((r) => r.name)).toEqual(['docs', 'a.txt']);
    await writeTree(root, { 'b.txt': 'b' });
    // Without a watcher, the walk just made would serve listings for WALK_REUSE_MS.
    expect((await listAll(source, 100)).items.map((r) => r.name)).toEqual(['docs', 'a.txt']);
    await source.settled?.();
    expect(listChanges(events)).toHaveLength(1);
    expect((await listAll(source, 100)).items.map((r) => r.name)).toEqual(['docs', 'a.txt', 'b.txt']);
    stop();
  });

  it('ignores changes under hidden names and stops after unsubscribing', async () => {
    const { root, source, events, stop } = await watched({ 'a.txt': 'a' });
    await writeTree(root, { '.git/index': 'x', '.env': 'x' });
    await source.settled?.();
    expect(events).toEqual([]);
    stop();
    await writeTree(root, { 'visible.txt': 'x' });
    await source.settled?.();
    expect(events).toEqual([]);
  });

  it('keeps delivering to other listeners when one throws', async () => {
    const root = await tempDir();
    const source = await createSource({ root }, '/');
    const events: SourceChange[] = [];
    source.watch?.(() => {
      throw new Error('listener bug');
    });
    const stop = source.watch?.((change) => events.push(change));
    await source.settled?.();
    await writeTree(root, { 'b.txt': 'b' });
    await source.settled?.();
    expect(listChanges(events)).toHaveLength(1);
    stop?.();
  });
});

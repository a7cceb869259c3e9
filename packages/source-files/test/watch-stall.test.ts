import { fork, type ChildProcess } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { SourceChange } from '@mcpgw/core';
import { createSource, tempDir, writeTree } from './helpers.js';

const SWAPPER = fileURLToPath(new URL('./symlink-swapper.mjs', import.meta.url));

/** Starts the swap loop in its own process (so it competes for the disk, not for our event loop). */
function startSwapper(root: string, ms: number): { child: ChildProcess; done: Promise<number> } {
  const child = fork(SWAPPER, [root, String(ms)], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const done = new Promise<number>((resolve, reject) => {
    child.once('message', (message) => resolve(Number((message as { swaps: number }).swaps)));
    child.once('error', reject);
  });
  return { child, done };
}

/**
 * A writer swapping a folder for a symlink thousands of
 * times a second inside a published root must not stall the event loop.
 * Node 20's recursive fs.watch on Linux re-reads and re-watches folders
 * synchronously on every event (and follows the symlink into its target), so
 * today the loop starves everything else in the process.
 */
describe('watching a folder under a symlink-swap loop', () => {
  it('keeps the event loop responsive and other reads prompt', async () => {
    const root = await tempDir();
    const outside = await tempDir();
    const tree: Record<string, string> = {};
    for (let i = 0; i < 200; i++) tree[`swap/f${i}.txt`] = 'x';
    for (let i = 0; i < 200; i++) tree[`target/g${i}.txt`] = 'y';
    await writeTree(root, tree);
    await writeTree(outside, { 'other.txt': 'other' });
    const source = await createSource({ root }, '/');
    const other = await createSource({ root: outside }, '/');
    const events: SourceChange[] = [];
    const stop = source.watch?.((change) => events.push(change));

    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const swapper = startSwapper(root, 3_000);
    swapper.child.unref();
    const readMs: number[] = [];
    let swaps = 0;
    swapper.done.then(
      (n) => (swaps = n),
      () => undefined,
    );
    const until = Date.now() + 3_000;
    while (Date.now() < until) {
      const started = performance.now();
      await other.read('file:///docs/other.txt');
      readMs.push(performance.now() - started);
      // eslint-disable-next-line local/no-bare-sleep -- paces the probe reads: this test measures the event loop under a real swap loop on purpose
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await swapper.done;
    delay.disable();
    // The watcher kept up: it noticed the swaps, and settles once they stop.
    await source.settled?.();
    stop?.();
    expect(events.some((e) => e.type === 'list-changed')).toBe(true);

    const maxDelayMs = delay.max / 1e6;
    const p99DelayMs = delay.percentile(99) / 1e6;
    const slowestReadMs = Math.max(...readMs);
    // Measured here: before, one stall of about 3.2 s (the whole loop) and 2 reads; after,
    // about 6,000 swaps with the worst delay near 50 ms and about 95 reads.
    const measured = { swaps, maxDelayMs, p99DelayMs, reads: readMs.length, slowestReadMs };
    // Bounds far from the measured numbers, so that a machine busy with other work passes,
    // and still well clear of the stall (one 3.2 s delay, 2 reads): a loaded machine that
    // runs this loop at a third of its speed still reads about 30 times.
    expect(maxDelayMs, JSON.stringify(measured)).toBeLessThan(2_000);
    expect(slowestReadMs, JSON.stringify(measured)).toBeLessThan(2_000);
    expect(readMs.length, JSON.stringify(measured)).toBeGreaterThan(15);
    expect(swaps, JSON.stringify(measured)).toBeGreaterThan(200);
  }, 30_000);
});

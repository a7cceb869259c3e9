import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ResourceContents, Source } from '@mcpgw/core';
import { walkPage, WHOLE_TREE } from '../src/sorted-walk.js';
import { readFolderListing } from '../src/walk-folder.js';
import { createSource, tempDir, writeTree } from './helpers.js';

// A writer inside a published folder swaps the folder `a` for a symlink to a
// folder outside the root, and back, as fast as it can, in another process
// (so the swaps really run in parallel with the gateway's file system calls).
// The outside folder mirrors the inside one name for name, so a read that
// follows the symlink at any step finds a file of the same name: the canary.
// Whatever the interleaving, no read may return a byte of it, and no listing
// may name a file that exists only outside.

const CANARY = 'CANARY: this file lies outside the root';
const READS = 10_000;
const PARALLEL = 8;
const WALKS = 1_000;
// One to three seconds per case on a busy machine; the timeout leaves room for a busier one.
const SLOW = 60_000;

// Sync calls in a loop: each iteration is rename, symlink, unlink, rename, so
// `a` is a folder, missing, a symlink to outside, and missing again in turn.
// It stops by itself after a while in case the test runner dies first.
const SWAPPER = `
const { renameSync, symlinkSync, unlinkSync } = require('node:fs');
const { join } = require('node:path');
const [root, outside] = process.argv.slice(1);
const a = join(root, 'a');
const parked = join(root, '.a-parked');
const until = Date.now() + 60_000;
let swaps = 0;
while (Date.now() < until) {
  renameSync(a, parked);
  symlinkSync(outside, a);
  unlinkSync(a);
  renameSync(parked, a);
  if (++swaps === 100) process.stdout.write('swapping\\n');
}
`;

let base: string;
let source: Source;
let swapper: ChildProcess | undefined;

beforeEach(async () => {
  base = await tempDir();
  await writeTree(base, {
    'root/a/b/file.txt': 'inside',
    'root/a/b/other.txt': 'inside too',
    'root/a/b/c/deeper.txt': 'deep inside',
    'outside/b/file.txt': CANARY,
    'outside/b/other.txt': CANARY,
    'outside/b/only-outside.txt': CANARY,
    'outside/b/c/deeper.txt': CANARY,
    'outside/b/c/only-outside.txt': CANARY,
  });
  // A symlink to a file inside the root that passes through `a`: its target
  // must be opened beneath the root as well.
  await symlink('a/b/file.txt', join(base, 'root', 'link.txt'));
  source = await createSource({ root: join(base, 'root') }, base);
});

afterEach(async () => {
  if (swapper !== undefined && swapper.exitCode === null) {
    const exited = once(swapper, 'exit');
    swapper.kill();
    await exited;
  }
  swapper = undefined;
});

/** Starts the swap loop and resolves once it is under way. */
async function startSwapping(): Promise<void> {
  const child = spawn(process.execPath, ['-e', SWAPPER, join(base, 'root'), join(base, 'outside')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  swapper = child;
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`the swap loop exited with ${String(code)} before it got going`);
  });
  await Promise.race([once(child.stdout as NodeJS.ReadableStream, 'data'), exited]);
  exited.catch(() => undefined); // killed in afterEach: not a failure then
}

/**
 * Runs `read` at least `READS` times, `PARALLEL` at a time, and tallies what
 * came back. On a loaded machine the swap loop can hold one state for a long
 * stretch, so reading goes on (up to five times as long) until both states
 * were seen: the fixture's own check that swaps and reads interleaved.
 */
async function hammer(
  read: () => Promise<ResourceContents[] | undefined>,
): Promise<{ leaks: number; found: number; missing: number }> {
  const tally = { leaks: 0, found: 0, missing: 0 };
  let next = 0;
  const more = () => next < READS || ((tally.found === 0 || tally.missing === 0) && next < READS * 5);
  const worker = async () => {
    while (more()) {
      next += 1;
      const contents = await read();
      if (contents === undefined) tally.missing += 1;
      else if (JSON.stringify(contents).includes('CANARY') || JSON.stringify(contents).includes('only-outside')) {
        tally.leaks += 1;
      } else tally.found += 1;
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  return tally;
}

describe('a parent folder swapped for a symlink during reads', () => {
  it('(the fixture: the swap loop really makes reads follow the symlink)', async () => {
    await startSwapping();
    // What the swap does to a plain path lookup: without a check beneath the
    // root, the same path now and then names the outside file.
    let outside = 0;
    for (let i = 0; i < 2_000 && outside === 0; i += 1) {
      const text = await readFile(join(base, 'root/a/b/file.txt'), 'utf8').catch(() => '');
      if (text === CANARY) outside += 1;
    }
    expect(outside).toBeGreaterThan(0);
  });

  it.each([
    ['a file two folders down', 'file:///docs/a/b/file.txt'],
    ['a file three folders down', 'file:///docs/a/b/c/deeper.txt'],
    ['a symlink whose target lies through the folder', 'file:///docs/link.txt'],
  ])(
    'never returns bytes from outside: %s',
    async (_what, uri) => {
      await startSwapping();
      const tally = await hammer(() => source.read(uri));
      expect(tally.leaks, `${tally.leaks} of ${READS} reads returned the outside file`).toBe(0);
      // The swaps did interleave with the reads: some found the file, some did not.
      expect(tally.found).toBeGreaterThan(0);
      expect(tally.missing).toBeGreaterThan(0);
    },
    SLOW,
  );

  it.each([
    ['a folder', 'file:///docs/a/b/'],
    ['a folder one deeper', 'file:///docs/a/b/c/'],
  ])(
    'never returns bytes or names from outside in a folder read: %s',
    async (_what, uri) => {
      await startSwapping();
      const tally = await hammer(() => source.read(uri));
      expect(tally.leaks, `${tally.leaks} of ${READS} folder reads returned outside files`).toBe(0);
      expect(tally.found).toBeGreaterThan(0);
    },
    SLOW,
  );

  it(
    'never lists a name from outside',
    async () => {
      await startSwapping();
      let leaks = 0;
      for (let i = 0; i < WALKS; i += 1) {
        const realRoot = join(base, 'root');
        const walk = await walkPage(
          (segments) => readFolderListing(realRoot, segments, 1_000),
          WHOLE_TREE,
          undefined,
          1_000,
        );
        if (walk.entries.some((e) => e.segments.includes('only-outside.txt'))) leaks += 1;
      }
      expect(leaks, `${leaks} of ${WALKS} walks listed a file from outside`).toBe(0);
    },
    SLOW,
  );
});

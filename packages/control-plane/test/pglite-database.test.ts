import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createPgliteDatabase } from '../src/pglite-database.js';

// initdb (in a child process) and PGlite's start take seconds on a loaded machine.
vi.setConfig({ testTimeout: 60_000 });

describe('the embedded database in a folder', () => {
  const folders: string[] = [];
  afterEach(async () => {
    await Promise.all(folders.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });
  const newFolder = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pglite-folder-'));
    folders.push(dir);
    return dir;
  };

  it('initialises a new folder and keeps what was written across a restart', async () => {
    const dataDir = join(await newFolder(), 'control-plane');
    const first = await createPgliteDatabase({ dataDir });
    expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true);
    await first.exec(`CREATE TABLE notes (body text); INSERT INTO notes VALUES ('kept')`);
    await first.close();

    const second = await createPgliteDatabase({ dataDir });
    expect((await second.query<{ body: string }>('SELECT body FROM notes')).rows).toEqual([{ body: 'kept' }]);
    await second.close();
  });

  it('initialises a folder given relative to the working directory there, not elsewhere', async () => {
    const parent = await newFolder();
    const name = `relative-${process.pid}`;
    // Where the initialising child process runs: nothing may be created there.
    const packageDir = fileURLToPath(new URL('..', import.meta.url));
    const previous = process.cwd();
    process.chdir(parent);
    try {
      const db = await createPgliteDatabase({ dataDir: name });
      await db.close();
    } finally {
      process.chdir(previous);
    }
    expect(existsSync(join(parent, name, 'PG_VERSION'))).toBe(true);
    expect(existsSync(join(packageDir, name))).toBe(false);
  });

  it('refuses a folder holding something other than a database, naming the folder', async () => {
    const dataDir = await newFolder();
    await writeFile(join(dataDir, 'base'), 'not a database folder');
    await expect(createPgliteDatabase({ dataDir })).rejects.toThrow(
      `initialising the embedded database in ${dataDir} failed`,
    );
  });
});

import { execFile } from 'node:child_process';
import { access, mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import type { PGlite } from '@electric-sql/pglite';
import type { SqlDatabase, SqlExecutor, SqlRows } from './sql-database.js';

export interface PgliteDatabaseOptions {
  /** Folder holding the database files (under DATA_DIR); absent = in memory (tests). */
  readonly dataDir?: string;
}

function executor(db: Pick<PGlite, 'query' | 'exec'>): SqlExecutor {
  return {
    async query<Row>(text: string, values?: readonly unknown[]): Promise<SqlRows<Row>> {
      const result = await db.query<Row>(text, values as unknown[] | undefined);
      return { rows: result.rows, affectedRows: result.affectedRows ?? 0 };
    },
    async exec(script: string): Promise<void> {
      await db.exec(script);
    },
  };
}

/**
 * The embedded store (PostgreSQL compiled to WebAssembly): `npm start` keeps
 * what was written across restarts without a database server. PGlite has one
 * connection, so its transactions run one at a time, which a control plane
 * written by people can afford.
 */
export async function createPgliteDatabase(options: PgliteDatabaseOptions = {}): Promise<SqlDatabase> {
  const db = await openPglite(options.dataDir);
  const shared = executor(db);
  return {
    engine: 'pglite',
    query: shared.query,
    exec: shared.exec,
    transaction: (work) => db.transaction((tx) => work(executor(tx))),
    async listen(channel, handlers) {
      // One in-process database: a notification can never be missed.
      const stop = await db.listen(channel, (payload) => handlers.onNotify(payload, channel));
      return stop;
    },
    close: () => db.close(),
  };
}

// PGlite's own default (128 MB of shared buffers) is for a database; a control plane holds kilobytes.
const PGLITE_OPTIONS = { postgresqlconf: 'shared_buffers = 8MB' };

/**
 * Opens the database in `dataDir` (in memory when absent). A folder without a
 * cluster is initialised by a short-lived child process first: the memory
 * initdb grows stays with the process that ran it, even after that instance is
 * closed (measured: a gateway's first start on a new DATA_DIR at 400 to 730 MB
 * resident, a restart on the same folder at 210 to 230 MB).
 */
async function openPglite(folder: string | undefined): Promise<PGlite> {
  compileWebAssemblyOnce();
  // Loaded here, not at the module's top: a gateway whose control plane is on PostgreSQL
  // imports this package too, and PGlite's JavaScript alone is about 5 MB resident.
  const { PGlite } = await import('@electric-sql/pglite');
  if (folder === undefined) return PGlite.create('memory://', PGLITE_OPTIONS);
  // Absolute, for the child process runs in another folder.
  const dataDir = resolve(folder);
  await mkdir(dataDir, { recursive: true });
  if (!(await hasCluster(dataDir))) await initializeInChildProcess(dataDir);
  return PGlite.create(dataDir, PGLITE_OPTIONS);
}

/**
 * V8 compiles WebAssembly twice by default: at once with its baseline
 * compiler (Liftoff), then the hot functions again with its optimizing one
 * (TurboFan), keeping both. For PostgreSQL's 9 MB module that second copy
 * and the compiler's work cost about 40 MB resident (measured: PGlite alone,
 * opened on an existing folder, 149 MB without this, 104 to 110 MB with it,
 * on Node 20 and 22) and lengthen the open; a control plane's few queries a
 * minute do not need optimized code. Set before the module is compiled; it
 * only touches WebAssembly, which the gateway's request path does not run.
 */
function compileWebAssemblyOnce(): void {
  setFlagsFromString('--liftoff-only');
}

const INITDB_SCRIPT = `
import { PGlite } from '@electric-sql/pglite';
const [dataDir, options] = process.argv.slice(-2);
try {
  await (await PGlite.create(dataDir, JSON.parse(options))).close();
} catch (error) {
  // PGlite's file errors carry an errno and no message.
  console.error(error?.message || \`\${error?.name ?? 'error'} (errno \${error?.errno})\`);
  process.exit(1);
}
`;

async function initializeInChildProcess(dataDir: string): Promise<void> {
  // Run from this package's folder, so that the script's import resolves to the same PGlite.
  const packageDir = fileURLToPath(new URL('..', import.meta.url));
  try {
    await promisify(execFile)(
      process.execPath,
      ['--input-type=module', '--eval', INITDB_SCRIPT, dataDir, JSON.stringify(PGLITE_OPTIONS)],
      { cwd: packageDir, timeout: 120_000 },
    );
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(
      `initialising the embedded database in ${dataDir} failed${stderr ? ` (${stderr})` : ''}: ` +
        'the folder must be writable and hold either nothing or a database written by the gateway',
      { cause: error },
    );
  }
}

/** Whether `dir` holds an initialised cluster (PostgreSQL writes PG_VERSION when initdb completes). */
async function hasCluster(dir: string): Promise<boolean> {
  try {
    await access(join(dir, 'PG_VERSION'));
    return true;
  } catch {
    return false;
  }
}

import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
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
  if (options.dataDir !== undefined) await mkdir(options.dataDir, { recursive: true });
  // PGlite's own default (128 MB of shared buffers) is for a database; a control plane holds kilobytes.
  const db = await PGlite.create(options.dataDir ?? 'memory://', { postgresqlconf: 'shared_buffers = 8MB' });
  const shared = executor(db);
  return {
    engine: 'pglite',
    query: shared.query,
    exec: shared.exec,
    transaction: (work) => db.transaction((tx) => work(executor(tx))),
    async listen(channel, handlers) {
      // One in-process database: a notification can never be missed.
      const stop = await db.listen(channel, (payload) => handlers.onNotify(payload));
      return stop;
    },
    close: () => db.close(),
  };
}

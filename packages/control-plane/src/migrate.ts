import { createHash } from 'node:crypto';
import type { Migration } from './migrations/index.js';
import { MIGRATIONS } from './migrations/index.js';
import type { SqlDatabase } from './sql-database.js';

/**
 * Key of the transaction-scoped advisory lock that serialises migration runs:
 * two replicas starting together never migrate at once; the second waits,
 * then finds nothing left to do. (An arbitrary constant, "mcpgw-cp".)
 */
const MIGRATION_LOCK_KEY = 0x6d637067;

/** SQLSTATE of a query on a table that does not exist (PostgreSQL, Appendix A). */
const UNDEFINED_TABLE = '42P01';

/** Why the store cannot be used with this gateway's schema; stops startup. */
export class MigrationError extends Error {
  override readonly name = 'MigrationError';
}

export interface MigrationReport {
  /** Versions applied by this run (empty when the schema was current). */
  readonly applied: readonly number[];
  /** The schema version after the run. */
  readonly version: number;
}

/**
 * Whether every one of `migrations`, and nothing else, is recorded as applied with its contents
 * (one query). Rows are only ever added by a committed migration run, so a record that matches
 * stays current until a newer gateway migrates it. A database without the record yet is not
 * current.
 */
async function isCurrent(db: SqlDatabase, migrations: readonly Migration[]): Promise<boolean> {
  const rows = await db
    .query<AppliedRow>('SELECT version, name, checksum FROM control_plane_migrations ORDER BY version')
    .then(
      (result) => result.rows,
      (error: unknown) => {
        // 42P01 undefined_table: a new database. Any other failure (unreachable, refused) is the start's to report.
        if ((error as { code?: unknown }).code === UNDEFINED_TABLE) return undefined;
        throw error;
      },
    );
  return (
    rows !== undefined &&
    rows.length === migrations.length &&
    rows.every((row, index) => {
      const known = migrations[index]!;
      return row.version === known.version && row.name === known.name && row.checksum === checksum(known);
    })
  );
}

function checksum(migration: Migration): string {
  return createHash('sha256').update(migration.sql).digest('hex');
}

interface AppliedRow {
  version: number;
  name: string;
  checksum: string;
}

/**
 * Brings the schema up to date. All pending migrations apply in one
 * transaction (Postgres DDL is transactional), so a replica killed halfway
 * leaves the previous version, never a mixture. Refuses, naming the problem,
 * a database that is newer than this gateway or whose applied migrations were
 * edited since: forward-only means an applied step never changes.
 */
export async function migrate(
  db: SqlDatabase,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<MigrationReport> {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new MigrationError(`migration "${migration.name}" has version ${migration.version}, expected ${index + 1}`);
    }
  });
  // A replica that starts on a current schema, as nearly every start does, reads the record once
  // and is done: no transaction, no lock. Anything else (no record yet, steps to apply, a
  // record that does not match) takes the locked path below, which decides and says why.
  if (await isCurrent(db, migrations)) return { applied: [], version: migrations.length };
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await tx.exec(`CREATE TABLE IF NOT EXISTS control_plane_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      checksum text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const { rows } = await tx.query<AppliedRow>(
      'SELECT version, name, checksum FROM control_plane_migrations ORDER BY version',
    );
    const newest = migrations.length;
    for (const row of rows) {
      const known = migrations[row.version - 1];
      if (known === undefined) {
        throw new MigrationError(
          `the control-plane database is at schema version ${rows.at(-1)?.version}, newer than this gateway knows (${newest}); run a gateway at least as new as the one that migrated it`,
        );
      }
      if (known.name !== row.name || checksum(known) !== row.checksum) {
        throw new MigrationError(
          `migration ${row.version} ("${row.name}") was applied with different contents than this gateway's "${known.name}"; applied migrations must never change`,
        );
      }
    }
    const applied: number[] = [];
    for (const migration of migrations.slice(rows.length)) {
      await tx.exec(migration.sql);
      await tx.query('INSERT INTO control_plane_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
        migration.version,
        migration.name,
        checksum(migration),
      ]);
      applied.push(migration.version);
    }
    return { applied, version: newest };
  });
}

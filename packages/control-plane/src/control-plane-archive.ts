import { SealedSecretError, type SecretBox } from './secret-box.js';
import { authorizationServerSecretsPlace, sourceSecretsPlace } from './source-secrets.js';
import type { SqlDatabase, SqlExecutor } from './sql-database.js';

/** The migrations' own bookkeeping (migrate.ts): not part of an archive, which records only its version. */
const MIGRATIONS_TABLE = 'control_plane_migrations';

async function schemaVersion(db: SqlExecutor): Promise<number> {
  const { rows } = await db.query<{ version: number | null }>(
    `SELECT max(version) AS version FROM ${MIGRATIONS_TABLE}`,
  );
  const version = rows[0]?.version ?? null;
  if (version === null) throw new ArchiveError('the control-plane store is not migrated: start a gateway on it once');
  return Number(version);
}

/**
 * A whole control plane as one JSON document: every row of every table the
 * migrations made, as the engine stores it (sealed credentials stay sealed),
 * with the schema version it was taken at. The same document moves an
 * embedded installation (PGlite) to Postgres, backs a store up and restores
 * it: the two engines share one schema, so a row is a row on either.
 */
export interface ControlPlaneArchive {
  readonly format: typeof ARCHIVE_FORMAT;
  /** The migration the exporting store was at; an import needs a store at the same one. */
  readonly schemaVersion: number;
  readonly exportedAt: string;
  /** Table name → its rows (column name → value, as `to_jsonb` gives it). */
  readonly tables: Readonly<Record<string, readonly Readonly<Record<string, unknown>>[]>>;
}

export const ARCHIVE_FORMAT = 'mcpgw-control-plane-archive/1';

export class ArchiveError extends Error {
  override readonly name = 'ArchiveError';
}

/** The tables with a `sealed_secrets` column, and what each value there is bound to. */
const SEALED_TABLES = {
  sources: sourceSecretsPlace,
  authorization_servers: authorizationServerSecretsPlace,
} as const;

type SealedTable = keyof typeof SEALED_TABLES;

const isSealedTable = (table: string): table is SealedTable => Object.hasOwn(SEALED_TABLES, table);

/** Where a sealed value lives, for re-sealing it under the importing store's key. */
export interface SealedCell {
  readonly table: SealedTable;
  readonly tenantId: string;
  readonly name: string;
  readonly sealed: string;
}

export interface ImportOptions {
  /**
   * Returns the value to store for each sealed credential: the same one when
   * both stores share SECRETS_KEY, or the value opened with the exporting
   * store's key and sealed with this one's. Throwing aborts the import.
   */
  readonly reseal?: (cell: SealedCell) => string;
}

export interface ImportReport {
  /** Rows written, by table. */
  readonly rows: Readonly<Record<string, number>>;
  readonly resealed: number;
}

const quote = (identifier: string): string => `"${identifier.replaceAll('"', '""')}"`;

/** The schema's own tables, parents before children (foreign keys), then by name. */
async function tablesInOrder(db: SqlExecutor): Promise<string[]> {
  const { rows: tables } = await db.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> $1
      ORDER BY table_name`,
    [MIGRATIONS_TABLE],
  );
  const { rows: references } = await db.query<{ child: string; parent: string }>(
    `SELECT tc.table_name AS child, ccu.table_name AS parent
       FROM information_schema.table_constraints tc
       JOIN information_schema.constraint_column_usage ccu
         ON ccu.constraint_name = tc.constraint_name AND ccu.constraint_schema = tc.constraint_schema
      WHERE tc.constraint_type = 'FOREIGN KEY' AND tc.table_schema = current_schema()`,
  );
  const ordered: string[] = [];
  const pending = new Set(tables.map((table) => table.name));
  while (pending.size > 0) {
    const ready = [...pending].filter((table) =>
      references.every((ref) => ref.child !== table || ref.parent === table || !pending.has(ref.parent)),
    );
    if (ready.length === 0) throw new ArchiveError(`circular foreign keys among ${[...pending].join(', ')}`);
    for (const table of ready) {
      ordered.push(table);
      pending.delete(table);
    }
  }
  return ordered;
}

/** Every row of the control plane, read in one transaction (a consistent snapshot on Postgres). */
export async function exportControlPlane(
  db: SqlDatabase,
  now: () => Date = () => new Date(),
): Promise<ControlPlaneArchive> {
  return db.transaction(async (tx) => {
    if (db.engine === 'postgres') await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    const version = await schemaVersion(tx);
    const tables: Record<string, Record<string, unknown>[]> = {};
    for (const table of await tablesInOrder(tx)) {
      const { rows } = await tx.query<{ row: Record<string, unknown> }>(
        `SELECT to_jsonb(t) AS row FROM ${quote(table)} t`,
      );
      tables[table] = rows.map((row) => row.row);
    }
    return { format: ARCHIVE_FORMAT, schemaVersion: version, exportedAt: now().toISOString(), tables };
  });
}

/**
 * Writes an archive into a migrated, empty store, in one transaction: all of
 * it or nothing. Refuses an archive of another format or schema version, a
 * table this schema does not have, and a store that already holds rows (a
 * restore never merges into a live control plane). Identity sequences are
 * moved past the imported ids, so audit events written later follow them.
 */
export async function importControlPlane(
  db: SqlDatabase,
  archive: unknown,
  options: ImportOptions = {},
): Promise<ImportReport> {
  const checked = checkArchive(archive);
  return db.transaction(async (tx) => {
    const version = await schemaVersion(tx);
    if (checked.schemaVersion !== version) {
      throw new ArchiveError(
        `the archive was taken at schema version ${checked.schemaVersion}, this store is at ${version}: ` +
          'import it with the gateway release that exported it, then upgrade',
      );
    }
    const tables = await tablesInOrder(tx);
    const unknown = Object.keys(checked.tables).filter((table) => !tables.includes(table));
    if (unknown.length > 0)
      throw new ArchiveError(`the archive has tables this schema does not: ${unknown.join(', ')}`);
    for (const table of tables) {
      const { rows } = await tx.query<{ present: boolean }>(`SELECT EXISTS (SELECT 1 FROM ${quote(table)}) AS present`);
      if (rows[0]?.present === true) {
        throw new ArchiveError(`the store is not empty (table ${table} has rows): import only into a new database`);
      }
    }
    const written: Record<string, number> = {};
    let resealed = 0;
    for (const table of tables) {
      const rows = (checked.tables[table] ?? []).map((row) => {
        if (!isSealedTable(table) || typeof row.sealed_secrets !== 'string' || options.reseal === undefined) return row;
        resealed += 1;
        const cell: SealedCell = {
          table,
          tenantId: String(row.tenant_id),
          name: String(row.name),
          sealed: row.sealed_secrets,
        };
        return { ...row, sealed_secrets: options.reseal(cell) };
      });
      written[table] = rows.length;
      if (rows.length === 0) continue;
      await tx.query(
        `INSERT INTO ${quote(table)} OVERRIDING SYSTEM VALUE
         SELECT * FROM jsonb_populate_recordset(NULL::${quote(table)}, $1::jsonb)`,
        [JSON.stringify(rows)],
      );
      await advanceIdentities(tx, table);
    }
    return { rows: written, resealed };
  });
}

/** Moves each identity column's sequence to the largest imported value. */
async function advanceIdentities(tx: SqlExecutor, table: string): Promise<void> {
  const { rows: columns } = await tx.query<{ name: string }>(
    `SELECT column_name AS name FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = $1 AND is_identity = 'YES'`,
    [table],
  );
  for (const { name } of columns) {
    await tx.query(
      `SELECT setval(pg_get_serial_sequence($1, $2), max_value, true)
         FROM (SELECT max(${quote(name)}) AS max_value FROM ${quote(table)}) m WHERE max_value IS NOT NULL`,
      [quote(table), name],
    );
  }
}

function checkArchive(value: unknown): ControlPlaneArchive {
  const archive = value as Partial<ControlPlaneArchive> | null;
  if (archive === null || typeof archive !== 'object' || archive.format !== ARCHIVE_FORMAT) {
    throw new ArchiveError(`not a control-plane archive (expected "format": "${ARCHIVE_FORMAT}")`);
  }
  if (!Number.isInteger(archive.schemaVersion)) throw new ArchiveError('the archive has no schemaVersion');
  const tables = archive.tables;
  if (tables === null || typeof tables !== 'object' || Array.isArray(tables)) {
    throw new ArchiveError('the archive has no tables');
  }
  for (const [table, rows] of Object.entries(tables)) {
    if (!Array.isArray(rows) || rows.some((row) => row === null || typeof row !== 'object' || Array.isArray(row))) {
      throw new ArchiveError(`the archive's table ${table} is not a list of rows`);
    }
  }
  return archive as ControlPlaneArchive;
}

/**
 * The `reseal` of an import: a credential that opens with this store's key
 * (`target`) and needs no new seal is kept as it is (a backup restored with
 * the same SECRETS_KEY); one sealed with another key opens with one of
 * `previous` (the exporting store's keys) and is sealed again with `target`'s.
 * One that opens with none aborts the import, naming the source.
 */
export function resealing(target: SecretBox, previous: readonly SecretBox[]): (cell: SealedCell) => string {
  return (cell) => {
    const place = SEALED_TABLES[cell.table](cell.tenantId, cell.name);
    for (const box of [target, ...previous]) {
      let plaintext: string;
      try {
        plaintext = box.open(cell.sealed, place);
      } catch (error) {
        if (error instanceof SealedSecretError) continue;
        throw error;
      }
      return box === target && !target.needsResealing(cell.sealed) ? cell.sealed : target.seal(plaintext, place);
    }
    throw new ArchiveError(
      `the credentials of ${cell.table === 'sources' ? `source "${cell.name}"` : 'the authorization server'} (tenant "${cell.tenantId}") open with none of the keys given: ` +
        "set SECRETS_KEY_PREVIOUS to the exporting store's SECRETS_KEY, or pass --key-file with its control-plane.key",
    );
  };
}

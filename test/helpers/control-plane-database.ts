/**
 * A control-plane database per test gateway on the test Postgres: the
 * gateway always serves from a control plane, and tests build hundreds of
 * gateways. Measured on the 2-core test machine (loaded) per gateway: a
 * clone of a migrated template database 0.35 s and its drop 0.5 s, a schema
 * of its own 0.6 s, a fresh database migrated 0.45 s, PGlite in memory 5.4 s
 * and 700 MB of resident memory after five; emptying a used database with
 * DELETE 0.02 s (TRUNCATE 0.2 s).
 *
 * So a database is cloned from the template when a test process needs one
 * more than it holds, and given back emptied when its gateway closes, for
 * the next gateway of the same process: each gateway still starts on an
 * empty, migrated store of its own. The databases of a process are named
 * after its pid; those of processes that are gone are dropped by the next
 * process that clones one.
 *
 * The template is named after the migrations' contents, so a change to them
 * makes a new one; it is built under an advisory lock and published by a
 * rename, so concurrent test processes build it once and never clone a half
 * migrated one.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createPostgresDatabase, migrate } from '@mcpgw/control-plane';
import { postgresUrl, requirePostgres } from './postgres.js';

export interface ControlPlaneDatabase {
  readonly name: string;
  /** DATABASE_URL for the gateway. */
  readonly url: string;
  /** Gives it back once nothing is connected to it: emptied for this process's next gateway, or dropped. Idempotent. */
  release(): Promise<void>;
}

const MIGRATIONS = fileURLToPath(new URL('../../packages/control-plane/src/migrations/', import.meta.url));
/** An arbitrary constant: the advisory lock the template is built under. */
const TEMPLATE_LOCK = 0x6d637067;

let template: Promise<string> | undefined;

async function query(url: string, text: string, values?: unknown[]): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000, query_timeout: 60_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function databaseUrl(admin: string, name: string): string {
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}

async function migrationsDigest(): Promise<string> {
  const hash = createHash('sha256');
  for (const file of (await readdir(MIGRATIONS)).sort()) hash.update(file).update(await readFile(MIGRATIONS + file));
  return hash.digest('hex').slice(0, 16);
}

async function ensureTemplate(admin: string): Promise<string> {
  const name = `mcpgw_test_cp_template_${await migrationsDigest()}`;
  const client = new pg.Client({ connectionString: admin, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK]);
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      const building = `${name}_building`;
      // Names are built from [a-z0-9_] only, so they need no quoting.
      await client.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
      await client.query(`CREATE DATABASE ${building}`);
      const db = createPostgresDatabase({ url: databaseUrl(admin, building) });
      try {
        await migrate(db);
      } finally {
        await db.close();
      }
      await client.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
    }
    return name;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK]).catch(() => undefined);
    await client.end().catch(() => undefined);
  }
}

/** Databases of this process, emptied, waiting for its next gateway. */
const idle: string[] = [];
const PREFIX = `mcpgw_test_cp_${process.pid}_`;
let swept = false;

/** Drops the databases of test processes that have exited (on this machine: the pid is in the name). */
async function sweepAbandoned(admin: string): Promise<void> {
  const { rows } = await query(admin, "SELECT datname FROM pg_database WHERE datname ~ '^mcpgw_test_cp_[0-9]+_'");
  for (const { datname } of rows as { datname: string }[]) {
    const pid = Number(/^mcpgw_test_cp_(\d+)_/.exec(datname)?.[1]);
    if (isAlive(pid)) continue;
    await query(admin, `DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`).catch(() => undefined);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Empties every table but the migrations' and restarts the sequences: the
 * store as the template has it. Foreign keys are not checked meanwhile
 * (session_replication_role), so the order of the deletes does not matter.
 */
async function empty(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000, query_timeout: 30_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const tables = await client.query<{ name: string }>(
      `SELECT quote_ident(tablename) AS name FROM pg_tables
        WHERE schemaname = 'public' AND tablename <> 'control_plane_migrations'`,
    );
    const sequences = await client.query<{ name: string }>(
      "SELECT quote_ident(sequencename) AS name FROM pg_sequences WHERE schemaname = 'public'",
    );
    await client.query('BEGIN');
    await client.query('SET LOCAL session_replication_role = replica');
    for (const { name } of tables.rows) await client.query(`DELETE FROM ${name}`);
    for (const { name } of sequences.rows) await client.query(`ALTER SEQUENCE ${name} RESTART`);
    await client.query('COMMIT');
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A migrated control-plane database with nothing in it; checks the server first (`requirePostgres`). */
export async function createControlPlaneDatabase(): Promise<ControlPlaneDatabase> {
  const admin = postgresUrl();
  let name = idle.pop();
  if (name === undefined) {
    await requirePostgres(admin);
    if (!swept) {
      swept = true;
      await sweepAbandoned(admin);
    }
    template ??= ensureTemplate(admin);
    const from = await template.catch((error: unknown) => {
      template = undefined;
      throw error;
    });
    name = `${PREFIX}${randomBytes(4).toString('hex')}`;
    await query(admin, `CREATE DATABASE ${name} TEMPLATE ${from}`);
  }
  const leased = name;
  const url = databaseUrl(admin, leased);
  let released = false;
  return {
    name: leased,
    url,
    async release() {
      if (released) return;
      released = true;
      try {
        await empty(url);
        idle.push(leased);
      } catch {
        await query(admin, `DROP DATABASE IF EXISTS ${leased} WITH (FORCE)`);
      }
    },
  };
}

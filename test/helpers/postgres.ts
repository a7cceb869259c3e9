/**
 * Real Postgres for tests and benchmarks (tests use real services and fail
 * loudly when one is missing, never skip).
 *
 * The server is `DATABASE_URL`, or postgres://postgres@127.0.0.1:5432/postgres
 * (trust auth on this kind of machine). `createTestDatabase()` makes a fresh
 * database with a random name and `drop()` removes it, ending any session
 * still connected (`WITH (FORCE)`, Postgres 13+).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
/** How long the server gets to answer `SELECT 1` before the run fails. */
export const POSTGRES_ANSWER_TIMEOUT_MS = 3000;
export const START_POSTGRES_HINT = 'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start';

/** The administrative connection string (DATABASE_URL or the loopback default). */
export function postgresUrl(): string {
  const fromEnv = process.env.DATABASE_URL;
  return fromEnv !== undefined && fromEnv !== '' ? fromEnv : DEFAULT_DATABASE_URL;
}

/** `url` without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: POSTGRES_ANSWER_TIMEOUT_MS,
    query_timeout: 30_000,
  });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Resolves when the server answers `SELECT 1` within 3 s; otherwise throws an
 * Error that says how to start it.
 */
export async function requirePostgres(url = postgresUrl()): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      withClient(url, (client) => client.query('SELECT 1')),
      new Promise((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error('no answer')), POSTGRES_ANSWER_TIMEOUT_MS);
      }),
    ]);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      `Postgres did not answer at ${redactUrl(url)} within ${POSTGRES_ANSWER_TIMEOUT_MS / 1000} s (${reason}). ` +
        `Start it with: ${START_POSTGRES_HINT}   (or set DATABASE_URL to a server that runs)`,
    );
  } finally {
    clearTimeout(timer);
  }
}

export interface TestDatabase {
  /** The database name, `mcpgw_test_<label>_<random>`. */
  readonly name: string;
  /** A connection string for it (same server and credentials as `postgresUrl()`). */
  readonly url: string;
  /** Runs SQL against it (fixtures); opens and closes its own connection. */
  sql(text: string, values?: unknown[]): Promise<pg.QueryResult>;
  /** Drops it, ending sessions still connected. Idempotent. */
  drop(): Promise<void>;
}

/** Creates a throwaway database; checks the server first (`requirePostgres`). */
export async function createTestDatabase(label = 'db'): Promise<TestDatabase> {
  const admin = postgresUrl();
  await requirePostgres(admin);
  const safeLabel = label
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')
    .slice(0, 20);
  const name = `mcpgw_test_${safeLabel}_${randomBytes(6).toString('hex')}`;
  // The name is built from [a-z0-9_] only above, so it needs no quoting.
  await withClient(admin, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(admin);
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    name,
    url: url.toString(),
    sql: (text, values) => withClient(url.toString(), (client) => client.query(text, values)),
    async drop() {
      if (dropped) return;
      dropped = true;
      await withClient(admin, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

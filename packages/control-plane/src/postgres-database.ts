import type pg from 'pg';
import { listenOnPostgres } from './postgres-listener.js';
import { postgresDriver } from './pg-module.js';
import type { SqlDatabase, SqlExecutor, SqlRows } from './sql-database.js';

export interface PostgresDatabaseOptions {
  /** A `postgres://` connection string (DATABASE_URL). */
  readonly url: string;
  /** Pool size per replica; the control plane is read at tenant load, not per request. Default 4. */
  readonly maxConnections?: number;
  /** How long to wait for a connection before failing (pg waits forever by default). Default 5 s. */
  readonly connectionTimeoutMs?: number;
}

function executor(client: pg.Pool | pg.PoolClient): SqlExecutor {
  return {
    async query<Row>(text: string, values?: readonly unknown[]): Promise<SqlRows<Row>> {
      const result = await client.query(text, values as unknown[] | undefined);
      return { rows: result.rows as Row[], affectedRows: result.rowCount ?? 0 };
    },
    async exec(script: string): Promise<void> {
      // Without parameters pg uses the simple query protocol, which runs several statements.
      await client.query(script);
    },
  };
}

/** The control-plane store on a Postgres server (production, and the tests' real Postgres). */
export function createPostgresDatabase(options: PostgresDatabaseOptions): SqlDatabase {
  const pool = new (postgresDriver().Pool)({
    connectionString: options.url,
    max: options.maxConnections ?? 4,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 5000,
    // A statement of the control plane is small; one that runs this long is stuck.
    statement_timeout: 30_000,
    application_name: 'mcpgw-control-plane',
  });
  // An idle client that loses its server emits here; the next query reconnects.
  pool.on('error', () => undefined);
  const shared = executor(pool);
  return {
    engine: 'postgres',
    query: shared.query,
    exec: shared.exec,
    async transaction(work) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await work(executor(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    listen: (channel, handlers) => listenOnPostgres(options.url, channel, handlers),
    close: () => pool.end(),
  };
}

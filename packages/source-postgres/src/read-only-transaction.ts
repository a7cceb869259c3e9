import type pg from 'pg';
import type { Pool, PoolClient, QueryResultRow } from 'pg';

/** Runs exactly one statement, always with the extended query protocol. */
export type RunQuery = <Row extends QueryResultRow>(text: string, values: readonly unknown[]) => Promise<Row[]>;

export interface TransactionTimeouts {
  statementTimeoutMs: number;
  lockTimeoutMs: number;
}

/**
 * What returns a pooled connection to the state it was opened in: settings
 * (back to the startup values, so the pinned search_path and read-only
 * default), session advisory locks, LISTEN registrations, prepared
 * statements, temporary tables and cursors. It cannot run inside a
 * transaction block, so it runs after the transaction ended.
 */
const RESET_SESSION = 'DISCARD ALL';

/**
 * Runs `work` inside `BEGIN TRANSACTION READ ONLY` with transaction-local
 * statement and lock timeouts, then ends the transaction and returns the
 * connection. Everything a caller can trigger goes through here (issue 5,
 * "Safety").
 *
 * READ ONLY stops writes to tables, not side effects: a published view may
 * call volatile functions (`set_config`, `pg_advisory_lock`, `pg_notify`).
 * The transaction therefore always ends in ROLLBACK (there is nothing to
 * keep: that discards queued notifications and undoes settings changed in
 * it), and the session is reset before the pool hands the connection to the
 * next caller, which releases what outlives a transaction (session advisory
 * locks). A connection that cannot be reset is destroyed instead.
 *
 * `query` always uses the extended query protocol, whose Parse message the
 * server rejects when it holds more than one statement ("cannot insert
 * multiple commands into a prepared statement"): "one statement per query"
 * holds by construction, not by review.
 */
export async function inReadOnlyTransaction<T>(
  pool: Pool,
  timeouts: TransactionTimeouts,
  work: (query: RunQuery) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // pg-pool removes its own error listener while a client is checked out, and
  // a connection lost then is emitted as 'error' on the client: unheard, that
  // is an uncaught exception. The failing query rejects anyway; just record it.
  const onError = (error: Error) => (broken ??= error);
  client.on('error', onError);
  try {
    await client.query('BEGIN TRANSACTION READ ONLY');
    // SET LOCAL cannot take parameters; set_config(..., true) is its
    // parameterised equivalent (is_local = true: ends with the transaction).
    await client.query("SELECT set_config('statement_timeout', $1, true), set_config('lock_timeout', $2, true)", [
      `${timeouts.statementTimeoutMs}ms`,
      `${timeouts.lockTimeoutMs}ms`,
    ]);
    const query: RunQuery = async (text, values) => {
      // `queryMode: 'extended'` even without parameters: pg otherwise sends a
      // parameterless query with the simple protocol, which runs `a; b`.
      const config = { text, values: [...values], queryMode: 'extended' };
      return (await client.query(config as pg.QueryConfig)).rows;
    };
    const result = await work(query);
    await client.query('ROLLBACK');
    await client.query(RESET_SESSION);
    return result;
  } catch (error) {
    broken ??= await rollback(client, error);
    throw error;
  } finally {
    client.removeListener('error', onError);
    // A connection whose rollback failed is in an unknown state: destroy it
    // (release(err)) so the pool opens a fresh one; this is also how the
    // source recovers from a server restart without a gateway restart.
    client.release(broken);
  }
}

async function rollback(client: PoolClient, cause: unknown): Promise<Error | undefined> {
  try {
    // Harmless when the failure came after the transaction ended (in the
    // reset): the server only warns that no transaction is in progress.
    await client.query('ROLLBACK');
    await client.query(RESET_SESSION);
    return undefined;
  } catch {
    return cause instanceof Error ? cause : new Error('rollback failed');
  }
}

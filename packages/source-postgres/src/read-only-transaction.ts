import type pg from 'pg';
import type { Pool, PoolClient, QueryResultRow } from 'pg';
import { postgresDriver } from './pg-module.js';

/** Runs exactly one statement, always with the extended query protocol. */
export type RunQuery = <Row extends QueryResultRow>(text: string, values: readonly unknown[]) => Promise<Row[]>;

export interface TransactionTimeouts {
  statementTimeoutMs: number;
  lockTimeoutMs: number;
}

/**
 * Who the transaction acts as: a role to switch to and settings to set, both
 * transaction-local (`set_config(..., true)`, the parameterised `SET LOCAL`),
 * so ROLLBACK undoes them before anything else runs on the connection.
 */
export interface TransactionSession {
  /** A role from the operator's allowlist; the login role must be a member of it. */
  readonly role: string;
  /** `[name, value]` pairs; names are the source's own, values are bound as parameters. */
  readonly settings: ReadonlyArray<readonly [string, string]>;
}

/**
 * The role switch was refused: the role does not exist (dropped, renamed)
 * or the login role may not become it. Nothing ran under any other role.
 */
export class RoleSwitchRefused extends Error {
  override readonly name = 'RoleSwitchRefused';
  constructor(
    readonly role: string,
    options: { cause: unknown },
  ) {
    super(`the role switch to "${role}" was refused`, options);
  }
}

/** SQLSTATEs a refused `set_config('role', ...)` raises: invalid_parameter_value, insufficient_privilege, undefined_object. */
const ROLE_REFUSED = new Set(['22023', '42501', '42704']);

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
 * connection. Everything a caller can trigger goes through here, so that no
 * request can write to the database.
 *
 * READ ONLY stops writes to tables, not side effects: a published view may
 * call volatile functions (`set_config`, `pg_advisory_lock`, `pg_notify`).
 * The transaction therefore always ends in ROLLBACK (there is nothing to
 * keep: that discards queued notifications and undoes settings changed in
 * it), and the session is reset before the pool hands the connection to the
 * next caller, which releases what outlives a transaction (session advisory
 * locks). A connection that cannot be reset is destroyed instead.
 *
 * Each of BEGIN, the setup, ROLLBACK and DISCARD ALL is a round trip of its
 * own. Sending BEGIN and the setup in front of the first query (one
 * extended-protocol pipeline, one Sync), and ending with one simple query of
 * ROLLBACK and DISCARD ALL's documented equivalent statements, were measured
 * side by side against this (bench/postgres-read.ts, docs/performance.md,
 * "Postgres source"): no gain outside the noise, and Postgres's CPU per read
 * already matched a route running the bare statements; so they are not used.
 *
 * `query` always uses the extended query protocol, whose Parse message the
 * server rejects when it holds more than one statement ("cannot insert
 * multiple commands into a prepared statement"): "one statement per query"
 * holds by construction, not by review.
 *
 * `signal` is the request's: when it aborts (the client went away), the
 * running statement is cancelled on the server (see {@link cancelBackend}),
 * no further statement starts, and the call rejects with the signal's reason.
 * Closing our socket would not do: the server notices a vanished client only
 * when it next writes to it, so a long query would run on to its timeout.
 */
export async function inReadOnlyTransaction<T>(
  pool: Pool,
  timeouts: TransactionTimeouts,
  work: (query: RunQuery) => Promise<T>,
  signal?: AbortSignal,
  session?: TransactionSession,
): Promise<T> {
  signal?.throwIfAborted();
  const client = await pool.connect();
  let broken: Error | undefined;
  // pg-pool removes its own error listener while a client is checked out, and
  // a connection lost then is emitted as 'error' on the client: unheard, that
  // is an uncaught exception. The failing query rejects anyway; just record it.
  const onError = (error: Error) => (broken ??= error);
  client.on('error', onError);
  const onAbort = () => {
    // The connection is destroyed, never pooled again: a cancel request that
    // reaches the backend late must not hit the next caller's statement.
    broken ??= new Error('request aborted');
    cancelBackend(pool, client);
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    // Aborted while waiting for a pooled connection: nothing ran, nothing to cancel.
    signal?.throwIfAborted();
    await client.query('BEGIN TRANSACTION READ ONLY');
    // SET LOCAL cannot take parameters; set_config(..., true) is its
    // parameterised equivalent (is_local = true: ends with the transaction).
    // The caller's role and settings go in the same statement: one round trip.
    const setup = sessionSetup(timeouts, session);
    try {
      await client.query(setup.text, setup.values);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (session !== undefined && typeof code === 'string' && ROLE_REFUSED.has(code)) {
        throw new RoleSwitchRefused(session.role, { cause: error });
      }
      throw error;
    }
    const query: RunQuery = async (text, values) => {
      signal?.throwIfAborted();
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
    if (signal?.aborted) throw signal.reason;
    // A connection whose statement outlived the driver's query timeout has stopped answering (the
    // server's statement_timeout would have ended the statement first): a ROLLBACK queued behind it
    // would wait out a second timeout, twice the read's budget, before the connection is destroyed.
    broken ??= isQueryReadTimeout(error) ? error : await rollback(client, error);
    throw error;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    client.removeListener('error', onError);
    // A connection whose rollback failed is in an unknown state: destroy it
    // (release(err)) so the pool opens a fresh one; this is also how the
    // source recovers from a server restart without a gateway restart.
    client.release(broken);
  }
}

/**
 * The transaction's first statement: its timeouts and, for a caller's
 * session, the role and settings. Every name and value is a parameter.
 */
function sessionSetup(
  timeouts: TransactionTimeouts,
  session: TransactionSession | undefined,
): { text: string; values: string[] } {
  const values = [`${timeouts.statementTimeoutMs}ms`, `${timeouts.lockTimeoutMs}ms`];
  const calls = ["set_config('statement_timeout', $1, true)", "set_config('lock_timeout', $2, true)"];
  if (session !== undefined) {
    for (const [name, value] of [...session.settings, ['role', session.role] as const]) {
      values.push(name, value);
      calls.push(`set_config($${values.length - 1}, $${values.length}, true)`);
    }
  }
  return { text: `SELECT ${calls.join(', ')}`, values };
}

/** What pg rejects a query with once `query_timeout` passes without its answer; pg gives it no code. */
const QUERY_READ_TIMEOUT = 'Query read timeout';

function isQueryReadTimeout(error: unknown): error is Error {
  return error instanceof Error && error.message === QUERY_READ_TIMEOUT;
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

/**
 * Asks the server to cancel whatever `client`'s backend is running, the way
 * psql's Ctrl-C does: a CancelRequest on a new connection carrying the
 * backend's process ID and secret key (PostgreSQL protocol, "Canceling
 * Requests in Progress"). It needs no login and no pool slot, so it works
 * with the pool exhausted. The statement then fails with SQLSTATE 57014.
 * Best effort: a failure only means the statement runs on to its timeout.
 */
function cancelBackend(pool: Pool, client: PoolClient): void {
  const { processID, secretKey } = client as PoolClient & BackendKey;
  if (processID === null || processID === undefined) return;
  // A Client parses the pool's settings (connection string, PG* variables) into host and port.
  const { Client, Connection } = postgresDriver();
  const { host, port } = new Client(pool.options);
  const connection = new Connection() as pg.Connection & CancelRequest;
  // The server closes the connection once it has read the request; an
  // unreachable server must not hold the socket open past this.
  const timer = setTimeout(() => connection.stream.destroy(), CANCEL_TIMEOUT_MS);
  timer.unref();
  connection.once('end', () => clearTimeout(timer));
  connection.on('error', () => connection.stream.destroy());
  connection.once('connect', () => connection.cancel(processID, secretKey));
  // A host starting with "/" is a Unix socket directory (libpq's convention, which pg follows).
  if (host.startsWith('/')) connection.connect(`${host}/.s.PGSQL.${port}`);
  else connection.connect(port, host);
}

/** How long a cancel request may take to be delivered before its socket is dropped. */
const CANCEL_TIMEOUT_MS = 5_000;

/** What pg keeps of the server's BackendKeyData message; missing from its type definitions. */
interface BackendKey {
  processID: number | null | undefined;
  secretKey: unknown;
}

/** pg's Connection can send a CancelRequest; missing from its type definitions. */
interface CancelRequest {
  connect(portOrPath: number | string, host?: string): void;
  cancel(processID: number, secretKey: unknown): void;
}

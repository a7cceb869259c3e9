import type pg from 'pg';
import type { PoolClient, QueryResultRow } from 'pg';
import { postgresDriver } from './pg-module.js';

/** One statement of the extended query protocol: its text and the values bound to its parameters. */
export interface Statement {
  readonly text: string;
  readonly values: readonly string[];
}

/**
 * A setup statement failed, so the query behind it never ran: the server
 * skips every message after an error up to the Sync (PostgreSQL protocol,
 * "Extended Query": "the backend will ... read and discard messages until a
 * Sync is reached"). `cause` is the server's error, as `query()` would have
 * rejected with it.
 */
export class SetupFailed extends Error {
  override readonly name = 'SetupFailed';
  constructor(options: { cause: unknown }) {
    super('a setup statement failed; the query behind it did not run', options);
  }
}

/** What pg's Query does with the backend's messages; its handlers are missing from the type definitions. */
interface QueryInternals {
  prepare(connection: PipelineConnection): void;
  handleDataRow(message: unknown): void;
  handleCommandComplete(message: unknown, connection: unknown): void;
  handleError(error: Error, connection: unknown): void;
  callback?: (error: Error | undefined, result?: { rows: unknown[] }) => void;
}

/** The messages of pg's Connection this writes; missing from its type definitions. */
interface PipelineConnection {
  parse(config: { text: string; name: string; types: unknown[] }): void;
  bind(config: { portal: string; statement: string; values: readonly string[] }): void;
  execute(config: { portal: string; rows: number }): void;
}

type QueryClass = new (config: pg.QueryConfig) => QueryInternals;
let afterSetupClass: QueryClass | undefined;

/**
 * pg's Query, preceded on the wire by `setup`: Parse, Bind and Execute of each
 * setup statement, then the query's own Parse, Bind, Describe, Execute and
 * the one Sync that ends them all, written together (pg corks the socket
 * around `prepare`). One round trip instead of one per statement. The setup
 * statements' answers (their rows and completions) are consumed here; an
 * error among them rejects with {@link SetupFailed}.
 */
function afterSetup(): QueryClass {
  if (afterSetupClass !== undefined) return afterSetupClass;
  const Query = postgresDriver().Query as unknown as QueryClass;
  class AfterSetup extends Query {
    readonly setup: readonly Statement[];
    /** Setup statements whose CommandComplete has not arrived yet. */
    pending: number;
    constructor(config: pg.QueryConfig, setup: readonly Statement[]) {
      super(config);
      this.setup = setup;
      this.pending = setup.length;
    }
    override prepare(connection: PipelineConnection): void {
      for (const statement of this.setup) {
        connection.parse({ text: statement.text, name: '', types: [] });
        connection.bind({ portal: '', statement: '', values: statement.values });
        connection.execute({ portal: '', rows: 0 });
      }
      super.prepare(connection);
    }
    override handleDataRow(message: unknown): void {
      if (this.pending === 0) super.handleDataRow(message);
    }
    override handleCommandComplete(message: unknown, connection: unknown): void {
      if (this.pending > 0) this.pending -= 1;
      else super.handleCommandComplete(message, connection);
    }
    override handleError(error: Error, connection: unknown): void {
      super.handleError(this.pending > 0 ? new SetupFailed({ cause: error }) : error, connection);
    }
  }
  afterSetupClass = AfterSetup as unknown as QueryClass;
  return afterSetupClass;
}

/**
 * Runs `setup` and then `query` on `client` in one round trip, all on the
 * extended protocol (each one statement by construction), and resolves with
 * the query's rows. The setup's answers are not returned.
 *
 * They share one Sync, so they are one pipeline (PostgreSQL protocol,
 * "Pipelining"): an error in any setup statement skips the rest and the
 * query, which never runs without its setup.
 */
export function queryAfterSetup<Row extends QueryResultRow>(
  client: PoolClient,
  setup: readonly Statement[],
  query: { readonly text: string; readonly values: readonly unknown[] },
): Promise<Row[]> {
  const Class = afterSetup() as unknown as new (config: pg.QueryConfig, setup: readonly Statement[]) => QueryInternals;
  return new Promise<Row[]>((resolve, reject) => {
    const submittable = new Class(
      { text: query.text, values: [...query.values], queryMode: 'extended' } as pg.QueryConfig,
      setup,
    );
    submittable.callback = (error, result) =>
      error === undefined || error === null ? resolve((result?.rows ?? []) as Row[]) : reject(error);
    // pg wraps `callback` with its query_timeout timer, as for its own queries.
    client.query(submittable as unknown as pg.Submittable);
  });
}

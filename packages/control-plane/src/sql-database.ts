/**
 * The one SQL surface the control plane needs, met by a pooled Postgres
 * connection (`DATABASE_URL`) and by embedded PGlite (the `npm start`
 * default). Everything above this file is written once for both engines.
 */
export interface SqlRows<Row> {
  readonly rows: Row[];
  /** Rows inserted, updated or deleted by the statement. */
  readonly affectedRows: number;
}

/** Runs statements; inside `transaction` every call shares one transaction. */
export interface SqlExecutor {
  query<Row = Record<string, unknown>>(text: string, values?: readonly unknown[]): Promise<SqlRows<Row>>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>;
}

export interface SqlDatabase extends SqlExecutor {
  /** Which engine answers, for logs and readiness. */
  readonly engine: 'postgres' | 'pglite';
  /**
   * Runs `work` in one transaction: committed when it resolves, rolled back
   * when it throws (and the error rethrown). Nothing is half-applied.
   */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /**
   * Delivers the payload of every NOTIFY on `channel` (sent at commit) to
   * `onNotify`. On Postgres a dedicated connection listens and reconnects
   * with backoff when lost; `onResubscribed` then runs, since notifications
   * sent while it was away are gone. Resolves to a function that stops it.
   */
  listen(channel: string, handlers: ListenHandlers): Promise<() => Promise<void>>;
  /** Releases connections (Postgres) or flushes and closes the database files (PGlite). */
  close(): Promise<void>;
}

export interface ListenHandlers {
  /** `channel`: the one it came on (the same for every notification of a one-channel listen). */
  onNotify(payload: string, channel: string): void;
  /** The listening connection came back after a loss: look for what changed meanwhile. */
  onResubscribed?(): void;
  /** The listening connection was lost (it reconnects by itself); for logs. */
  onLost?(error: unknown): void;
}

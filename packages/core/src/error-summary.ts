/** What a log line keeps of an error: operator-facing, never returned to clients. */
export interface ErrorSummary {
  name: string;
  message: string;
  /** A system or driver code (`ECONNREFUSED`, a Postgres SQLSTATE), when the error carries a string one. */
  code?: string;
}

/**
 * Name, message and code of an error, for logs. Not the stack or the error
 * itself: a driver error can carry the query, its parameters or a connection
 * string, and none of those belong in a log line.
 */
export function errorSummary(error: unknown): ErrorSummary {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string'
    ? { name: error.name, message: error.message, code }
    : { name: error.name, message: error.message };
}

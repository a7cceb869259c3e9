import { findEgressRefusal, GatewayError, isGatewayError, type Logger } from '@mcpgw/core';

/** SQLSTATE 57014 query_canceled: what statement_timeout raises. */
const QUERY_CANCELED = '57014';
/** SQLSTATE 55P03 lock_not_available: what lock_timeout raises. */
const LOCK_NOT_AVAILABLE = '55P03';

/**
 * Turns any backend failure into the public MCPGW_SOURCE_UNAVAILABLE (-32603).
 * The message names the source only: driver messages can carry host names and
 * ports (`connect ECONNREFUSED 10.0.0.5:5432`), so they go to the log, which
 * is operator-only, and to `cause`, which the gateway never sends.
 */
export function sourceUnavailable(sourceId: string, error: unknown, logger: Logger): GatewayError {
  if (isGatewayError(error)) return error;
  const code = sqlState(error);
  const message = error instanceof Error ? error.message : String(error);
  const timedOut = code === QUERY_CANCELED || code === LOCK_NOT_AVAILABLE || /timeout|timed out/i.test(message);
  logger.warn({ err: { code, message } }, 'postgres source query failed');
  // The refused address stays in the log and the status; the caller learns only which policy applies.
  const publicMessage = timedOut
    ? `Postgres source "${sourceId}" did not answer in time`
    : findEgressRefusal(error) === undefined
      ? `Postgres source "${sourceId}" is unavailable`
      : `Postgres source "${sourceId}" is unavailable: the gateway's egress policy refuses its address`;
  return new GatewayError('MCPGW_SOURCE_UNAVAILABLE', publicMessage, { cause: error });
}

/** The SQLSTATE of a server error, if `error` is one. */
export function sqlState(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  const code = (error as { code: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

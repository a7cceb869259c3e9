/**
 * Errors that sources and packages raise. Each carries a stable `code` (API:
 * documented in docs/protocol.md) and a public `message`; the internal cause
 * goes to logs only, never to the wire.
 */

export type GatewayErrorCode =
  /** A source could not parse the pagination position inside a cursor. */
  | 'ERR_INVALID_POSITION'
  /** Input a client sent is malformed (bad URI, bad template variable). */
  | 'ERR_INVALID_INPUT'
  /** A resource exceeds a configured size limit; the message states the limit. */
  | 'ERR_TOO_LARGE'
  /** The backend of a source failed or timed out. */
  | 'ERR_SOURCE_UNAVAILABLE';

export class GatewayError extends Error {
  readonly code: GatewayErrorCode;
  /** Whether `message` may be shown to the client. */
  readonly expose: boolean;

  constructor(code: GatewayErrorCode, message: string, options?: { cause?: unknown; expose?: boolean }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    // Messages are written for the client by contract (they name a source id,
    // never a host, path or connection string); `expose: false` withholds one.
    this.expose = options?.expose ?? true;
  }
}

export function invalidPosition(cause?: unknown): GatewayError {
  return new GatewayError('ERR_INVALID_POSITION', 'The cursor does not match this listing', { cause });
}

export function isGatewayError(value: unknown): value is GatewayError {
  return value instanceof GatewayError;
}

import type { GatewayErrorCode } from './error-registry.js';
import { formatErrorMessage } from './error-registry.js';

export interface GatewayErrorOptions {
  /** Internal detail: logs only, never the wire. */
  cause?: unknown;
  /** Public `error.data` (e.g. the versions a server supports). */
  data?: Record<string, unknown>;
  /** The framework's own 4xx, for `MCPGW_HTTP_REQUEST_INVALID` only; every other status is the registry's. */
  httpStatus?: number;
}

/**
 * An error any layer raises: a stable `code` from the registry
 * (error-registry.ts), whose public message it formats, and an internal
 * `cause` that goes to logs only. Every message is public by construction
 * (the registry's text, filled with values public by contract), so there is
 * no per-error "expose" flag: internal detail belongs in `cause`
 * (docs/adr/0005-error-registry.md).
 */
export class GatewayError extends Error {
  readonly code: GatewayErrorCode;
  readonly data: Record<string, unknown> | undefined;
  readonly httpStatus: number | undefined;

  /** `values` fill the `%s` of the code's message, in order. */
  constructor(code: GatewayErrorCode, values: string | readonly string[] = [], options: GatewayErrorOptions = {}) {
    super(
      formatErrorMessage(code, typeof values === 'string' ? [values] : values),
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'GatewayError';
    this.code = code;
    this.data = options.data;
    this.httpStatus = options.httpStatus;
  }
}

/** What a source throws for a position it cannot parse: one cursor failure, like every other. */
export function invalidPosition(cause?: unknown): GatewayError {
  return new GatewayError('MCPGW_CURSOR_INVALID', [], { cause });
}

export function isGatewayError(value: unknown): value is GatewayError {
  return value instanceof GatewayError;
}

import { ErrorCode } from './error-codes.js';
import { SUPPORTED_VERSIONS } from './versions.js';

/**
 * An error that crosses the wire as a JSON-RPC error object. `message` and
 * `data` are public; anything internal belongs in `cause`, which only logs see.
 * `httpStatus` is the status of the HTTP response that carries it: transport
 * and envelope failures are 4xx (2026-07-28 transports, Server Validation),
 * while failures of a well-formed call travel in a 200 like any JSON-RPC result.
 */
export class McpError extends Error {
  readonly code: number;
  readonly data: unknown;
  readonly httpStatus: number;

  constructor(code: number, message: string, options: { data?: unknown; httpStatus?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'McpError';
    this.code = code;
    this.data = options.data;
    this.httpStatus = options.httpStatus ?? 200;
  }

  toJSON(): { code: number; message: string; data?: unknown } {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

export function parseError(detail: string): McpError {
  return new McpError(ErrorCode.ParseError, `Parse error: ${detail}`, { httpStatus: 400 });
}

export function invalidRequest(message: string, httpStatus = 400): McpError {
  return new McpError(ErrorCode.InvalidRequest, message, { httpStatus });
}

/** 404 + -32601, as 2026-07-28 transports requires for a method the server does not implement. */
export function methodNotFound(method: string): McpError {
  return new McpError(ErrorCode.MethodNotFound, `Method not found: ${method}`, { httpStatus: 404 });
}

/** -32602 for malformed params of an otherwise valid call. */
export function invalidParams(message: string, options: { data?: unknown; httpStatus?: number } = {}): McpError {
  return new McpError(ErrorCode.InvalidParams, message, options);
}

export function headerMismatch(message: string): McpError {
  return new McpError(ErrorCode.HeaderMismatch, `Header mismatch: ${message}`, { httpStatus: 400 });
}

/** 400 + -32022 with `data.supported` and `data.requested` (2026-07-28 basic/versioning). */
export function unsupportedProtocolVersion(requested: string): McpError {
  return new McpError(
    ErrorCode.UnsupportedProtocolVersion,
    `Unsupported protocol version: ${requested}. Supported versions: ${SUPPORTED_VERSIONS.join(', ')}`,
    { httpStatus: 400, data: { supported: [...SUPPORTED_VERSIONS], requested } },
  );
}

/** A generic -32603: the public message never carries internals (the cause is logged). */
export function internalError(cause?: unknown, message = 'Internal error'): McpError {
  return new McpError(ErrorCode.InternalError, message, { cause });
}

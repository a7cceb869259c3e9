import type { GatewayErrorCode } from '@mcpgw/core';

/**
 * An error as it crosses the wire: a JSON-RPC error object and the HTTP
 * status of the response that carries it. `message` and `data` are public;
 * anything internal belongs in `cause`, which only logs see. Built from the
 * error registry by `toMcpError`.
 */
export class McpError extends Error {
  readonly code: number;
  readonly data: unknown;
  readonly httpStatus: number;
  /** The registry code it was built from, for logs. */
  readonly gatewayCode: GatewayErrorCode | undefined;

  constructor(
    code: number,
    message: string,
    options: { data?: unknown; httpStatus?: number; cause?: unknown; gatewayCode?: GatewayErrorCode } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'McpError';
    this.code = code;
    this.data = options.data;
    this.httpStatus = options.httpStatus ?? 200;
    this.gatewayCode = options.gatewayCode;
  }

  toJSON(): { code: number; message: string; data?: unknown } {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

import { isGatewayError } from '@mcpgw/core';
import { ErrorCode } from './error-codes.js';
import { McpError, internalError, invalidParams } from './mcp-error.js';

/**
 * Turns anything a handler threw into the error that crosses the wire. Known
 * gateway errors keep their public message; everything else becomes a bare
 * -32603 whose cause stays in the logs (2026-07-28 server-resources, Error
 * Handling: "Servers SHOULD return -32603 for internal errors").
 */
export function toMcpError(error: unknown, uri?: string): McpError {
  if (error instanceof McpError) return error;
  if (isGatewayError(error)) {
    switch (error.code) {
      case 'ERR_INVALID_POSITION':
        return invalidParams(error.message);
      case 'ERR_INVALID_INPUT':
      case 'ERR_TOO_LARGE':
        return invalidParams(error.message, uri === undefined ? {} : { data: { uri } });
      case 'ERR_SOURCE_UNAVAILABLE':
        return internalError(error, error.expose ? error.message : undefined);
    }
  }
  return internalError(error);
}

/** Whether an error should be logged as a server fault (the rest are the client's). */
export function isServerFault(error: McpError): boolean {
  return error.code === ErrorCode.InternalError;
}

import { GatewayError, errorDefinition, isGatewayError } from '@mcpgw/core';
import type { GatewayErrorCode, GatewayErrorOptions } from '@mcpgw/core';
import { ErrorCode } from './error-codes.js';
import { McpError } from './mcp-error.js';

/** What the wire form of an error depends on besides the error itself. */
interface WireContext {
  /** The `params.uri` of the request, for codes whose `data` carries it. */
  uri?: string | undefined;
  /** The initialize era answers some codes differently (registry `legacy`). Default modern. */
  era?: 'modern' | 'legacy';
}

/**
 * Turns anything a handler threw into the error that crosses the wire, by
 * the error registry alone. Anything that is not a GatewayError becomes a
 * bare MCPGW_INTERNAL whose cause stays in the logs (2026-07-28
 * server-resources, Error Handling: "Servers SHOULD return -32603 for
 * internal errors").
 */
export function toMcpError(error: unknown, context: WireContext = {}): McpError {
  if (error instanceof McpError) return error;
  const known = isGatewayError(error) ? error : new GatewayError('MCPGW_INTERNAL', [], { cause: error });
  const definition = errorDefinition(known.code);
  const legacy = context.era === 'legacy' ? definition.legacy : undefined;
  const data =
    known.data ?? (definition.dataUri === true && context.uri !== undefined ? { uri: context.uri } : undefined);
  return new McpError(legacy?.jsonRpcCode ?? definition.jsonRpcCode, known.message, {
    httpStatus: legacy?.httpStatus ?? known.httpStatus ?? definition.httpStatus,
    data,
    // The GatewayError itself for the log; an unknown error as it was thrown.
    cause: known === error ? known : error,
    gatewayCode: known.code,
  });
}

/** The wire form of a registry code, for the app's own refusals. */
export function wireError(
  code: GatewayErrorCode,
  values?: string | readonly string[],
  options?: GatewayErrorOptions,
): McpError {
  return toMcpError(new GatewayError(code, values, options));
}

/** Whether an error should be logged as a server fault (the rest are the client's). */
export function isServerFault(error: McpError): boolean {
  return error.code === ErrorCode.InternalError;
}

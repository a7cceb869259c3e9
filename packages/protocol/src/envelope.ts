import { GatewayError } from '@mcpgw/core';

/** A JSON-RPC id: MCP allows strings and integers (and never null for requests). */
export type RequestId = string | number;

export interface JsonRpcRequest {
  kind: 'request';
  id: RequestId;
  method: string;
  params: Record<string, unknown>;
}

export interface JsonRpcNotification {
  kind: 'notification';
  method: string;
  params: Record<string, unknown>;
}

export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification;

/**
 * Checks that a parsed HTTP body is one JSON-RPC request or notification
 * (2026-07-28 transports, Sending Messages: "The body of the HTTP POST MUST be
 * a single JSON-RPC request or notification"). Throws MCPGW_BATCH_UNSUPPORTED
 * or MCPGW_REQUEST_INVALID (-32600) otherwise.
 */
export function parseEnvelope(body: unknown): JsonRpcMessage {
  if (Array.isArray(body)) {
    throw new GatewayError('MCPGW_BATCH_UNSUPPORTED');
  }
  if (!isPlainObject(body)) {
    throw new GatewayError('MCPGW_REQUEST_INVALID', 'The body must be a JSON-RPC 2.0 request object');
  }
  if (body.jsonrpc !== '2.0') {
    throw new GatewayError('MCPGW_REQUEST_INVALID', 'The body must be a JSON-RPC 2.0 request: "jsonrpc" must be "2.0"');
  }
  if (!('method' in body)) {
    throw new GatewayError(
      'MCPGW_REQUEST_INVALID',
      'result' in body || 'error' in body
        ? 'Clients must not send JSON-RPC responses to the server'
        : 'The request has no "method"',
    );
  }
  const { method } = body;
  if (typeof method !== 'string' || method.length === 0) {
    throw new GatewayError('MCPGW_REQUEST_INVALID', '"method" must be a non-empty string');
  }
  let params: Record<string, unknown> = {};
  if (body.params !== undefined) {
    if (!isPlainObject(body.params)) {
      throw new GatewayError('MCPGW_REQUEST_INVALID', '"params" must be an object');
    }
    params = body.params;
  }
  if (!('id' in body)) {
    return { kind: 'notification', method, params };
  }
  const { id } = body;
  if (!isRequestId(id)) {
    throw new GatewayError('MCPGW_REQUEST_INVALID', '"id" must be a string or an integer');
  }
  return { kind: 'request', id, method, params };
}

/** The request id of a body, when one can be read, so an error can echo it. */
export function readRequestId(body: unknown): RequestId | null {
  return isPlainObject(body) && isRequestId(body.id) ? body.id : null;
}

function isRequestId(value: unknown): value is RequestId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value));
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

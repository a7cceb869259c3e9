import type { Logger } from '@mcpgw/core';
import type { RequestId } from './envelope.js';
import { parseEnvelope, readRequestId } from './envelope.js';
import { selectEra } from './era.js';
import { isServerFault, toMcpError } from './error-mapping.js';
import { handleLegacyRequest } from './legacy-handlers.js';
import type { McpError } from './mcp-error.js';
import { handleModernRequest } from './modern-handlers.js';
import type { ResourceService, ServerIdentity } from './resource-service.js';
import type { CacheScope } from './results.js';

/** The parts of an HTTP POST to the MCP endpoint the protocol needs; the app adapts its framework to this. */
export interface McpHttpRequest {
  /** Case-insensitive header lookup (lower-case names); undefined when absent. */
  header(name: string): string | undefined;
  /** The JSON-parsed body. */
  body: unknown;
  /** Aborted when the client goes away (2026-07-28 cancellation: closing the stream cancels). */
  signal: AbortSignal;
}

export interface McpHttpResponse {
  status: number;
  /** A JSON-RPC response object, or undefined for 202 Accepted. */
  body?: JsonRpcResponseBody;
}

export type JsonRpcResponseBody =
  | { jsonrpc: '2.0'; id: RequestId; result: Record<string, unknown> }
  | { jsonrpc: '2.0'; id?: RequestId; error: ReturnType<McpError['toJSON']> };

export interface DispatchContext {
  server: ServerIdentity;
  /** The caller's resource set (tenant- and authorization-scoped). */
  resources: ResourceService;
  resourceCacheScope: CacheScope;
  discoverTtlMs: number;
  logger: Logger;
}

/**
 * Serves one POST to a tenant's MCP endpoint, in either protocol era. Never
 * throws: every failure becomes a JSON-RPC error with the right HTTP status.
 */
export async function dispatchMcpPost(request: McpHttpRequest, context: DispatchContext): Promise<McpHttpResponse> {
  let id: RequestId | null = readRequestId(request.body);
  let era: 'modern' | 'legacy' = 'modern';
  try {
    const message = parseEnvelope(request.body);
    // "If the server accepts [a notification], the server MUST return HTTP
    // status code 202 Accepted with no body" (transports, Sending Messages).
    if (message.kind === 'notification') return { status: 202 };
    id = message.id;
    const selected = selectEra(request.header('mcp-protocol-version'), message);
    era = selected.era;
    const result =
      selected.era === 'modern'
        ? await handleModernRequest(message, selected.version, {
            server: context.server,
            resources: context.resources,
            resourceCacheScope: context.resourceCacheScope,
            discoverTtlMs: context.discoverTtlMs,
            header: request.header,
            signal: request.signal,
          })
        : await handleLegacyRequest(message, selected.version, {
            server: context.server,
            resources: context.resources,
            signal: request.signal,
          });
    return { status: 200, body: { jsonrpc: '2.0', id: message.id, result } };
  } catch (thrown) {
    const error = toMcpError(thrown, { uri: uriOf(request.body), era });
    if (isServerFault(error)) {
      context.logger.error({ code: error.gatewayCode, err: error.cause ?? error }, 'request failed');
    }
    return errorResponse(id, error);
  }
}

/**
 * An error response. When the request id could not be read, `id` is left out:
 * MCP's schema types it as an optional string or integer, never null
 * (2026-07-28 basic/index: "except in error cases where the ID could not be
 * read due a malformed request").
 */
export function errorResponse(id: RequestId | null, error: McpError): McpHttpResponse {
  return {
    status: error.httpStatus,
    body: id === null ? { jsonrpc: '2.0', error: error.toJSON() } : { jsonrpc: '2.0', id, error: error.toJSON() },
  };
}

function uriOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const params = (body as { params?: unknown }).params;
  if (typeof params !== 'object' || params === null) return undefined;
  const uri = (params as { uri?: unknown }).uri;
  return typeof uri === 'string' ? uri : undefined;
}

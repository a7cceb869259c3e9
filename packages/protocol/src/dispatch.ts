import type { Logger } from '@mcpgw/core';
import type { RequestId } from './envelope.js';
import { parseEnvelope, readRequestId } from './envelope.js';
import { selectEra } from './era.js';
import { isServerFault, toMcpError } from './error-mapping.js';
import { handleLegacyRequest } from './legacy-handlers.js';
import type { McpError } from './mcp-error.js';
import { checkModernRequest, handleModernRequest } from './modern-handlers.js';
import type { ResourceService, ServerIdentity } from './resource-service.js';
import type { CacheScope } from './results.js';
import type { ListenRequest } from './subscriptions.js';
import { LISTEN_METHOD, readSubscriptionFilter } from './subscriptions.js';

/** The parts of an HTTP POST to the MCP endpoint the protocol needs; the app adapts its framework to this. */
export interface McpHttpRequest {
  /** Case-insensitive header lookup (lower-case names); undefined when absent. */
  header(name: string): string | undefined;
  /** The JSON-parsed body. */
  body: unknown;
  /** Aborted when the client goes away (2026-07-28 cancellation: closing the stream cancels). */
  signal: AbortSignal;
}

/** `S`: what the app's `listen` returned, when the answer is a listen stream to open. */
export interface McpHttpResponse<S = never> {
  status: number;
  /** A JSON-RPC response object, or undefined for 202 Accepted (and for a stream). */
  body?: JsonRpcResponseBody;
  /** Set instead of `body` when the request opened a `subscriptions/listen` stream. */
  subscription?: S;
}

export type JsonRpcResponseBody =
  | { jsonrpc: '2.0'; id: RequestId; result: Record<string, unknown> }
  | { jsonrpc: '2.0'; id?: RequestId; error: ReturnType<McpError['toJSON']> };

export interface DispatchContext<S = never> {
  server: ServerIdentity;
  /** The caller's resource set (tenant- and authorization-scoped). */
  resources: ResourceService;
  resourceCacheScope: CacheScope;
  discoverTtlMs: number;
  logger: Logger;
  /**
   * Opens a `subscriptions/listen` stream (2026-07-28 only) once the request
   * passed every check; throws a GatewayError to refuse it with a JSON-RPC
   * error (a limit). Absent: the method is not served (-32601) and
   * `server/discover` advertises no notifications.
   */
  listen?: (request: ListenRequest, signal: AbortSignal) => Promise<S>;
}

/**
 * Serves one POST to a tenant's MCP endpoint, in either protocol era. Never
 * throws: every failure becomes a JSON-RPC error with the right HTTP status.
 */
export async function dispatchMcpPost<S = never>(
  request: McpHttpRequest,
  context: DispatchContext<S>,
): Promise<McpHttpResponse<S>> {
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
    // A listen request is answered by a stream, not a result: the app opens it
    // (basic/patterns/subscriptions). The legacy era has no such method.
    if (selected.era === 'modern' && message.method === LISTEN_METHOD && context.listen !== undefined) {
      checkModernRequest(message, selected.version, request.header);
      const filter = readSubscriptionFilter(message.params);
      return { status: 200, subscription: await context.listen({ id: message.id, filter }, request.signal) };
    }
    const result =
      selected.era === 'modern'
        ? await handleModernRequest(message, selected.version, {
            server: context.server,
            resources: context.resources,
            resourceCacheScope: context.resourceCacheScope,
            discoverTtlMs: context.discoverTtlMs,
            header: request.header,
            signal: request.signal,
            subscriptions: context.listen !== undefined,
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
      // A request its client cancelled by going away (basic/patterns/cancellation) fails because of that:
      // no one reads the answer and it is no server fault, so no error line with a stack for each one a
      // hung backend holds until its caller gives up (the access line still records it).
      if (request.signal.aborted) context.logger.debug({ code: error.gatewayCode }, 'request cancelled');
      else context.logger.error({ code: error.gatewayCode, err: error.cause ?? error }, 'request failed');
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
export function errorResponse(id: RequestId | null, error: McpError): McpHttpResponse<never> {
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

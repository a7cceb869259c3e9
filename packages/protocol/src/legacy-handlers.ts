import type { JsonRpcRequest } from './envelope.js';
import { GatewayError } from '@mcpgw/core';
import { readCursorParam, readUriParam } from './request-params.js';
import type { ResourceService, ServerIdentity } from './resource-service.js';
import { compact, implementation, partialResultMeta } from './results.js';
import type { LegacyVersion } from './versions.js';
import { LATEST_LEGACY_VERSION, isLegacyVersion } from './versions.js';

export interface LegacyContext {
  server: ServerIdentity;
  resources: ResourceService;
  signal: AbortSignal;
}

type Handler = (request: JsonRpcRequest, context: LegacyContext) => Promise<Record<string, unknown>>;

/**
 * The initialize era (2025-03-26 .. 2025-11-25), served statelessly: no
 * `Mcp-Session-Id` is minted, so every request stands alone, and the results
 * take that era's shape (no resultType, ttlMs or cacheScope).
 */
const handlers: Record<string, Handler> = {
  /**
   * "If the server supports the requested protocol version, it MUST respond
   * with the same version. Otherwise, the server MUST respond with another
   * protocol version it supports" (2025-11-25 basic/lifecycle, Version Negotiation).
   */
  initialize: async (request, context) => {
    const requested = request.params.protocolVersion;
    const protocolVersion =
      typeof requested === 'string' && isLegacyVersion(requested) ? requested : LATEST_LEGACY_VERSION;
    return compact({
      protocolVersion,
      // Subscriptions need session state this stateless endpoint does not keep.
      capabilities: { resources: { subscribe: false, listChanged: false } },
      serverInfo: implementation(context.server),
      instructions: context.server.instructions,
    });
  },

  ping: async () => ({}),

  'resources/list': async (request, context) => {
    const page = await context.resources.listResources(readCursorParam(request.params), context.signal);
    return compact({
      resources: page.resources,
      nextCursor: page.nextCursor,
      _meta: legacyMeta(page.unavailableSources, page.incompleteSources),
    });
  },

  'resources/templates/list': async (request, context) => {
    const page = await context.resources.listTemplates(readCursorParam(request.params), context.signal);
    return compact({
      resourceTemplates: page.resourceTemplates,
      nextCursor: page.nextCursor,
      _meta: legacyMeta(page.unavailableSources),
    });
  },

  'resources/read': async (request, context) => {
    const uri = readUriParam(request.params);
    const outcome = await context.resources.read(uri, context.signal);
    if (outcome === undefined) {
      // 2025-11-25 server/resources, Error Handling: "Resource not found: -32002" (the registry's legacy code).
      throw new GatewayError('MCPGW_RESOURCE_NOT_FOUND', [], { data: { uri } });
    }
    return { contents: outcome.contents };
  },
};

/**
 * This era's results have `_meta` too (2025-11-25 basic/index, General
 * fields), but no `ttlMs` to say a listing is partial: the same vendor key
 * is the only signal, present only when a source was skipped.
 */
function legacyMeta(
  unavailableSources: readonly string[] | undefined,
  incompleteSources?: readonly string[],
): Record<string, unknown> | undefined {
  const meta = partialResultMeta(unavailableSources, incompleteSources);
  return Object.keys(meta).length === 0 ? undefined : meta;
}

export async function handleLegacyRequest(
  request: JsonRpcRequest,
  _version: LegacyVersion,
  context: LegacyContext,
): Promise<Record<string, unknown>> {
  const handler = Object.hasOwn(handlers, request.method) ? handlers[request.method] : undefined;
  // On the legacy wire an unknown method is an ordinary JSON-RPC error in a 200
  // (the registry's legacy status): a 404 there tells a 2025 client its session expired.
  if (handler === undefined) throw new GatewayError('MCPGW_METHOD_NOT_FOUND', request.method);
  return handler(request, context);
}

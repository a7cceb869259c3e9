import { GatewayError } from '@mcpgw/core';
import type { JsonRpcRequest } from './envelope.js';
import { isPlainObject } from './envelope.js';
import { CLIENT_CAPABILITIES_META, PROTOCOL_VERSION_META } from './era.js';
import { decodeHeaderValue } from './header-value.js';
import { readCursorParam, readUriParam } from './request-params.js';
import type { ResourceRequestOptions, ResourceService, ServerIdentity } from './resource-service.js';
import type { CacheScope } from './results.js';
import { compact, partialResultMeta, resultMeta } from './results.js';
import type { ModernVersion } from './versions.js';
import { SUPPORTED_VERSIONS } from './versions.js';

export interface ModernContext {
  server: ServerIdentity;
  resources: ResourceService;
  /** Scope of results that depend on the caller's authorization (resources/*). */
  resourceCacheScope: CacheScope;
  /** How long a client may cache `server/discover`. */
  discoverTtlMs: number;
  header(name: string): string | undefined;
  signal: AbortSignal;
  /** Whether `subscriptions/listen` is served here: then resource notifications are advertised. */
  subscriptions?: boolean;
}

type Handler = (request: JsonRpcRequest, context: ModernContext) => Promise<Record<string, unknown>>;

/**
 * The methods served on the 2026-07-28 wire. Everything else, including the
 * legacy-only `initialize`, `ping`, `logging/setLevel`, `resources/subscribe`
 * and `resources/unsubscribe`, is -32601 with HTTP 404.
 */
const handlers: Record<string, Handler> = {
  'server/discover': async (_request, context) => ({
    resultType: 'complete',
    supportedVersions: [...SUPPORTED_VERSIONS],
    // server/resources, "Capabilities": both are delivered on `subscriptions/listen` streams,
    // so they are advertised exactly when the app serves that method.
    capabilities: { resources: context.subscriptions === true ? { listChanged: true, subscribe: true } : {} },
    ...(context.server.instructions === undefined ? {} : { instructions: context.server.instructions }),
    ttlMs: context.discoverTtlMs,
    // The same for every caller: it depends on configuration only.
    cacheScope: 'public',
    _meta: resultMeta(context.server),
  }),

  'resources/list': async (request, context) => {
    const page = await context.resources.listResources(
      readCursorParam(request.params),
      context.signal,
      cacheOptions(request),
    );
    const meta = partialResultMeta(page.unavailableSources, page.incompleteSources);
    return listPageResult(context, { resources: page.encodedResources ?? page.resources }, page, meta);
  },

  'resources/templates/list': async (request, context) => {
    const page = await context.resources.listTemplates(
      readCursorParam(request.params),
      context.signal,
      cacheOptions(request),
    );
    const meta = partialResultMeta(page.unavailableSources);
    return listPageResult(
      context,
      {
        resourceTemplates: page.encodedResourceTemplates ?? page.resourceTemplates,
      },
      page,
      meta,
    );
  },

  'resources/read': async (request, context) => {
    const uri = readUriParam(request.params);
    checkMcpName(context.header('mcp-name'), uri);
    const outcome = await context.resources.read(uri, context.signal, cacheOptions(request));
    if (outcome === undefined) {
      // "Servers MUST NOT return an empty contents array for a non-existent resource" (server-resources, Error Handling).
      throw new GatewayError('MCPGW_RESOURCE_NOT_FOUND', [], { data: { uri } });
    }
    return {
      resultType: 'complete',
      contents: outcome.encodedContents ?? outcome.contents,
      ttlMs: outcome.ttlMs,
      cacheScope: context.resourceCacheScope,
      _meta: resultMeta(context.server),
    };
  },
};

/**
 * The result of one list page (resources or templates): its entries, then
 * the page's cursor and freshness, and `meta` (partial-result notes) in `_meta`.
 */
function listPageResult(
  context: ModernContext,
  entries: Record<string, unknown>,
  page: { nextCursor?: string; ttlMs: number },
  meta: Record<string, unknown>,
): Record<string, unknown> {
  return compact({
    resultType: 'complete',
    ...entries,
    nextCursor: page.nextCursor,
    ttlMs: page.ttlMs,
    cacheScope: context.resourceCacheScope,
    _meta: { ...resultMeta(context.server), ...meta },
  });
}

/**
 * "Results produced by retrying a request through the multi round-trip
 * requests mechanism, that is, requests carrying `inputResponses` or
 * `requestState`, MUST NOT be cached" (MCP 2026-07-28, Server utilities,
 * Caching).
 */
function cacheOptions(request: JsonRpcRequest): ResourceRequestOptions {
  return { cacheable: !('inputResponses' in request.params) && !('requestState' in request.params) };
}

/** Serves one modern request after the era was chosen. */
export async function handleModernRequest(
  request: JsonRpcRequest,
  version: ModernVersion,
  context: ModernContext,
): Promise<Record<string, unknown>> {
  checkModernRequest(request, version, context.header);
  const handler = Object.hasOwn(handlers, request.method) ? handlers[request.method] : undefined;
  if (handler === undefined) throw new GatewayError('MCPGW_METHOD_NOT_FOUND', request.method);
  return handler(request, context);
}

/** The checks every modern request passes before its method runs: `_meta` and the `Mcp-Method` header. */
export function checkModernRequest(
  request: JsonRpcRequest,
  version: ModernVersion,
  header: (name: string) => string | undefined,
): void {
  checkRequestMeta(request, version);
  checkMcpMethod(header('mcp-method'), request.method);
}

/**
 * Every modern request carries `_meta` with the protocol version and client
 * capabilities (2026-07-28 basic/index, `_meta`); missing → MCPGW_REQUEST_META_INVALID
 * (-32602, HTTP 400). The version must equal the header (transports, Protocol Version Header).
 */
function checkRequestMeta(request: JsonRpcRequest, version: ModernVersion): void {
  const meta = request.params._meta;
  if (!isPlainObject(meta)) {
    throw new GatewayError(
      'MCPGW_REQUEST_META_INVALID',
      `params._meta is required on every request: include "${PROTOCOL_VERSION_META}" and "${CLIENT_CAPABILITIES_META}"`,
    );
  }
  const requested = meta[PROTOCOL_VERSION_META];
  if (typeof requested !== 'string') {
    throw new GatewayError(
      'MCPGW_REQUEST_META_INVALID',
      `params._meta["${PROTOCOL_VERSION_META}"] is required and must be a string`,
    );
  }
  if (!isPlainObject(meta[CLIENT_CAPABILITIES_META])) {
    throw new GatewayError(
      'MCPGW_REQUEST_META_INVALID',
      `params._meta["${CLIENT_CAPABILITIES_META}"] is required and must be an object`,
    );
  }
  if (requested !== version) {
    throw new GatewayError(
      'MCPGW_HEADER_MISMATCH',
      `MCP-Protocol-Version header '${version}' does not match _meta value '${requested}'`,
    );
  }
}

function checkMcpMethod(header: string | undefined, method: string): void {
  if (header === undefined) throw new GatewayError('MCPGW_HEADER_MISMATCH', 'the Mcp-Method header is required');
  if (header !== method) {
    throw new GatewayError(
      'MCPGW_HEADER_MISMATCH',
      `Mcp-Method header '${header}' does not match body method '${method}'`,
    );
  }
}

/** `Mcp-Name` must equal `params.uri` after decoding the base64 sentinel form (transports, Server Validation). */
function checkMcpName(header: string | undefined, uri: string): void {
  if (header === undefined)
    throw new GatewayError('MCPGW_HEADER_MISMATCH', 'the Mcp-Name header is required for resources/read');
  const decoded = decodeHeaderValue(header);
  if (!decoded.ok) throw new GatewayError('MCPGW_HEADER_MISMATCH', `Mcp-Name header ${decoded.reason}`);
  if (decoded.value !== uri)
    throw new GatewayError('MCPGW_HEADER_MISMATCH', 'Mcp-Name header does not match params.uri');
}

import { JsonRpcErrorCode as J } from './json-rpc-error-codes.js';

/**
 * How one gateway error crosses the wire. The code string is API (listed in
 * docs/protocol.md, "Error codes", and checked against it by a test); the
 * numbers and the message are what an MCP client sees.
 */
export interface ErrorDefinition {
  /** The JSON-RPC `error.code`. */
  readonly jsonRpcCode: number;
  /**
   * The status of the HTTP response that carries it: 4xx for transport and
   * envelope failures (2026-07-28 transports, Server Validation), 200 for a
   * failure of a well-formed call, which travels like any JSON-RPC response.
   */
  readonly httpStatus: number;
  /** Where the initialize-era wire (2025-11-25) differs. */
  readonly legacy?: { readonly jsonRpcCode?: number; readonly httpStatus?: number };
  /**
   * The public message. Each `%s` is filled, in order, by the raising site
   * with a value that is public by contract (a limit, a source id, a header
   * the client sent): never a host, a path, a connection string or a token.
   */
  readonly message: string;
  /** Whether `error.data.uri` carries the URI the client asked for. */
  readonly dataUri?: true;
}

/**
 * Every error the gateway answers with, after Fastify's `FST_ERR_*` registry:
 * stable `MCPGW_*` strings, one per situation a client can tell apart. The
 * mapping to the wire is this table and nothing else; raising sites name a
 * code and, where the message has `%s`, its values.
 */
export const errorRegistry = {
  // Admission: before the body is read (docs/adr/0003-admit-before-parse.md).
  /** The Host or Origin header names another site (2026-07-28 transports, DNS rebinding protection). */
  MCPGW_REQUEST_FORBIDDEN: { jsonRpcCode: J.InvalidRequest, httpStatus: 403, message: '%s' },
  /** The path names no tenant served here. */
  MCPGW_TENANT_UNKNOWN: {
    jsonRpcCode: J.InvalidRequest,
    httpStatus: 404,
    message: 'Unknown tenant %s: no MCP endpoint here',
  },
  /** GET, DELETE, PUT or PATCH on the MCP endpoint (2026-07-28 transports: POST only). */
  MCPGW_METHOD_NOT_ALLOWED: {
    jsonRpcCode: J.InvalidRequest,
    httpStatus: 405,
    message: 'Method Not Allowed: the MCP endpoint accepts POST only, not %s',
  },
  /**
   * Over a rate limit (per address, per tenant or per caller): HTTP 429 with
   * Retry-After (RFC 6585 section 4, RFC 9110 section 10.2.3). The message names the scope and the wait.
   */
  MCPGW_RATE_LIMITED: {
    jsonRpcCode: J.ServerBusy,
    httpStatus: 429,
    message: 'Rate limit exceeded (%s): retry after %s s',
  },
  /**
   * The replica is overloaded (event-loop delay or utilization over its
   * threshold), or the tenant has too many requests in flight: HTTP 503 with
   * Retry-After (RFC 9110 section 15.6.4), refused rather than queued.
   */
  MCPGW_OVERLOADED: {
    jsonRpcCode: J.ServerBusy,
    httpStatus: 503,
    message: 'The gateway is overloaded (%s): retry after %s s',
  },
  /**
   * A `subscriptions/listen` stream over a configured cap (per caller, per
   * tenant, or on this replica): refused at once, before the stream opens,
   * rather than queued. The message names the cap.
   */
  MCPGW_LISTEN_LIMIT: {
    jsonRpcCode: J.ServerBusy,
    httpStatus: 429,
    message: 'Too many open subscriptions/listen streams (%s): close one before opening another',
  },
  /** No bearer token, or another scheme (RFC 6750 section 3.1: a challenge without an error code). */
  MCPGW_AUTH_REQUIRED: {
    jsonRpcCode: J.InvalidRequest,
    httpStatus: 401,
    message: 'Authentication required: send an OAuth access token in the Authorization header (Bearer scheme)',
  },
  /** RFC 6750 `invalid_token`: the token is malformed, expired, foreign or cannot be verified. */
  MCPGW_TOKEN_INVALID: { jsonRpcCode: J.InvalidRequest, httpStatus: 401, message: '%s' },
  /** RFC 6750 `insufficient_scope`: the token lacks the tenant's required scopes. */
  MCPGW_SCOPE_INSUFFICIENT: {
    jsonRpcCode: J.InvalidRequest,
    httpStatus: 403,
    message: 'The access token lacks the required scope: %s',
  },
  /** RFC 6750 `invalid_request`: a token in the URL or body, two Authorization headers, malformed credentials. */
  MCPGW_AUTH_REQUEST_INVALID: { jsonRpcCode: J.InvalidRequest, httpStatus: 400, message: '%s' },

  // The HTTP body, as the framework reads it.
  MCPGW_CONTENT_TYPE_UNSUPPORTED: {
    jsonRpcCode: J.InvalidRequest,
    httpStatus: 415,
    message: 'Content-Type must be application/json',
  },
  MCPGW_BODY_EMPTY: {
    jsonRpcCode: J.InvalidRequest,
    httpStatus: 400,
    message: 'The body is empty: send one JSON-RPC request',
  },
  MCPGW_BODY_TOO_LARGE: {
    jsonRpcCode: J.InvalidRequest,
    httpStatus: 413,
    message: 'The body is larger than the 1 MiB limit',
  },
  MCPGW_PARSE_ERROR: { jsonRpcCode: J.ParseError, httpStatus: 400, message: 'Parse error: the body is not valid JSON' },
  /** Any other request the framework refuses; the raising site gives the framework's 4xx status. */
  MCPGW_HTTP_REQUEST_INVALID: { jsonRpcCode: J.InvalidRequest, httpStatus: 400, message: '%s' },
  /** A failure outside the protocol layer (a hook or the framework); the cause goes to the log. */
  MCPGW_SERVER_FAULT: { jsonRpcCode: J.InternalError, httpStatus: 500, message: 'Internal error' },

  // The JSON-RPC envelope and the era (2026-07-28 transports, basic/versioning).
  MCPGW_BATCH_UNSUPPORTED: {
    jsonRpcCode: J.InvalidRequest,
    httpStatus: 400,
    message: 'JSON-RPC batches are not supported: send one request per HTTP POST',
  },
  /** The body is not one JSON-RPC 2.0 request or notification; the message names what is wrong. */
  MCPGW_REQUEST_INVALID: { jsonRpcCode: J.InvalidRequest, httpStatus: 400, message: '%s' },
  /** `error.data` carries `supported` and `requested` (2026-07-28 basic/versioning). */
  MCPGW_PROTOCOL_VERSION_UNSUPPORTED: {
    jsonRpcCode: J.UnsupportedProtocolVersion,
    httpStatus: 400,
    message: 'Unsupported protocol version: %s. Supported versions: %s',
  },
  /** A required MCP header is missing or differs from the body (2026-07-28 transports, Server Validation). */
  MCPGW_HEADER_MISMATCH: { jsonRpcCode: J.HeaderMismatch, httpStatus: 400, message: 'Header mismatch: %s' },
  /** A modern request without `_meta` protocol version and client capabilities (2026-07-28 basic/index). */
  MCPGW_REQUEST_META_INVALID: { jsonRpcCode: J.InvalidParams, httpStatus: 400, message: '%s' },
  /**
   * A method the gateway does not serve: 404 on the modern wire (2026-07-28
   * transports); in a 200 on the legacy wire, where a 404 tells a 2025 client
   * its session expired.
   */
  MCPGW_METHOD_NOT_FOUND: {
    jsonRpcCode: J.MethodNotFound,
    httpStatus: 404,
    legacy: { httpStatus: 200 },
    message: 'Method not found: %s',
  },

  // Failures of a well-formed call: JSON-RPC errors in an HTTP 200.
  /** `cursor` or `uri` params of the wrong type or shape. */
  MCPGW_PARAMS_INVALID: { jsonRpcCode: J.InvalidParams, httpStatus: 200, message: '%s' },
  /**
   * Every cursor failure, wherever it is found: tampered, foreign, expired,
   * malformed, minted before the tenant's sources changed, or a source
   * position the source cannot parse. One message, so a client learns nothing
   * about why (2026-07-28 server/utilities/pagination: invalid cursors -32602).
   */
  MCPGW_CURSOR_INVALID: {
    jsonRpcCode: J.InvalidParams,
    httpStatus: 200,
    message: 'Invalid cursor: it is malformed, expired, or no longer matches this listing; list again without a cursor',
  },
  /**
   * Missing, invisible to the caller, or refused by its source; the three are
   * indistinguishable. -32602 on 2026-07-28 (server/resources, Error Handling),
   * -32002 on 2025-11-25.
   */
  MCPGW_RESOURCE_NOT_FOUND: {
    jsonRpcCode: J.InvalidParams,
    httpStatus: 200,
    legacy: { jsonRpcCode: J.LegacyResourceNotFound },
    message: 'Resource not found',
    dataUri: true,
  },
  /** Input inside a resource URI a source refuses (a rows query, a template variable); the message says which. */
  MCPGW_INPUT_INVALID: { jsonRpcCode: J.InvalidParams, httpStatus: 200, message: '%s', dataUri: true },
  /** A resource over its source's size limit; the message states the limit. */
  MCPGW_RESOURCE_TOO_LARGE: { jsonRpcCode: J.InvalidParams, httpStatus: 200, message: '%s', dataUri: true },
  /** A source's backend failed or timed out; the message names the source id only, the cause goes to the log. */
  MCPGW_SOURCE_UNAVAILABLE: { jsonRpcCode: J.InternalError, httpStatus: 200, message: '%s' },
  /** Anything unexpected while serving a call (2026-07-28 server/resources: -32603); the cause goes to the log. */
  MCPGW_INTERNAL: { jsonRpcCode: J.InternalError, httpStatus: 200, message: 'Internal error' },
} as const satisfies Record<`MCPGW_${string}`, ErrorDefinition>;

/** A stable error code: API, documented in docs/protocol.md. */
export type GatewayErrorCode = keyof typeof errorRegistry;

/** The definition of `code`. */
export function errorDefinition(code: GatewayErrorCode): ErrorDefinition {
  return errorRegistry[code];
}

/** Fills the `%s` of `code`'s message, in order; a missing value leaves nothing behind. */
export function formatErrorMessage(code: GatewayErrorCode, values: readonly string[]): string {
  let next = 0;
  return errorRegistry[code].message.replace(/%s/g, () => values[next++] ?? '');
}

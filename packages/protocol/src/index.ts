// The public surface of @mcpgw/protocol: what apps/gateway, @mcpgw/cache and
// @mcpgw/catalog use. Tests reach the other modules by path (../src/<module>.js).

/** The JSON-RPC error codes, under the name the wire layer uses. */
export { ErrorCode } from './error-codes.js';
/** A JSON-RPC error on its way to the wire. */
export { McpError } from './mcp-error.js';
/** A JSON-RPC request id (JSON-RPC 2.0 section 4). */
export type { RequestId } from './envelope.js';
export { readRequestId } from './envelope.js';
/** Signs and checks opaque cursors, bound to tenant, caller and listing. */
export { createCursorCodec, type CursorCodec } from './cursor.js';
/** The same codec, handing a caller the cursor it was just given for the same place instead of sealing anew. */
export { reuseSealedCursors, type CursorReuseOptions } from './cursor-reuse.js';
/** Handles one POST to the MCP endpoint, for both eras (MCP 2026-07-28 and the initialize era). */
export { dispatchMcpPost, errorResponse, type McpHttpResponse } from './dispatch.js';
/** What the dispatcher asks of the layer below it: list and read, paged, for one caller. */
export type {
  CursorListing,
  ReadOutcome,
  ResourcePage,
  ResourceService,
  ServerIdentity,
  TemplatePage,
} from './resource-service.js';
/** Finished results kept as the bytes to send, and their serialization with the request id spliced in. */
export { EncodedJson, serializeResponse } from './encoded-json.js';
export { StreamedBody } from './streamed-body.js';
/** Maps any thrown error to the JSON-RPC error the wire carries, from the error registry. */
export { toMcpError, wireError } from './error-mapping.js';
/** `subscriptions/listen`: the filter, the stream's messages and their SSE framing (2026-07-28). */
export {
  acknowledgedNotification,
  listenCompletion,
  resourceListChangedNotification,
  resourceUpdatedNotification,
  SSE_KEEPALIVE,
  sseEvent,
  SUBSCRIPTION_ID_META,
  type ListenRequest,
  type StreamNotification,
  type SubscriptionFilter,
} from './subscriptions.js';

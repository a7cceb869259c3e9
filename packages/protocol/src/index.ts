export { ErrorCode } from './error-codes.js';
export type { ErrorCodeValue } from './error-codes.js';
export { McpError } from './mcp-error.js';
export { parseEnvelope, readRequestId } from './envelope.js';
export type { JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, RequestId } from './envelope.js';
export { decodeHeaderValue } from './header-value.js';
export { createCursorCodec } from './cursor.js';
export type { CursorBinding, CursorCodec, CursorCodecOptions } from './cursor.js';
export { dispatchMcpPost, errorResponse } from './dispatch.js';
export type { DispatchContext, JsonRpcResponseBody, McpHttpRequest, McpHttpResponse } from './dispatch.js';
export { EncodedJson, serializeResponse } from './encoded-json.js';
export type {
  CursorListing,
  ReadOutcome,
  ResourcePage,
  ResourceRequestOptions,
  ResourceService,
  ServerIdentity,
  TemplatePage,
} from './resource-service.js';
export type { CacheScope } from './results.js';
export { toMcpError, wireError } from './error-mapping.js';
export {
  HEADERLESS_LEGACY_VERSION,
  LATEST_LEGACY_VERSION,
  LEGACY_VERSIONS,
  MODERN_VERSIONS,
  SUPPORTED_VERSIONS,
} from './versions.js';
export type { LegacyVersion, ModernVersion } from './versions.js';

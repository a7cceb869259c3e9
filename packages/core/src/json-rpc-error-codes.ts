/**
 * JSON-RPC error codes the gateway emits. -32700..-32603 are JSON-RPC 2.0
 * (section 5.1); -32020..-32022 are defined by MCP 2026-07-28 (basic/index,
 * Error Codes); -32002 is the 2025-11-25 "resource not found", emitted only
 * on that wire.
 */
export const JsonRpcErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /**
   * JSON-RPC 2.0 section 5.1 reserves -32000 to -32099 for implementation-defined
   * server errors; -32000 is ours for refusals that say "not now" (rate limit, overload).
   */
  ServerBusy: -32000,
  HeaderMismatch: -32020,
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022,
  LegacyResourceNotFound: -32002,
} as const;

export type JsonRpcErrorCodeValue = (typeof JsonRpcErrorCode)[keyof typeof JsonRpcErrorCode];

/** The JSON-RPC error codes, defined once in core beside the error registry that uses them. */
export { JsonRpcErrorCode as ErrorCode } from '@mcpgw/core';
export type { JsonRpcErrorCodeValue as ErrorCodeValue } from '@mcpgw/core';

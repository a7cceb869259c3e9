import type { FastifyRequest } from 'fastify';

/** What the MCP route learned about a request, for its access line. */
export interface McpLogFields {
  /** The JSON-RPC error code of the response, when it is an error. */
  rpcError?: number;
  /** A short keyed hash of the caller (issuer and subject): correlates lines without naming anyone. */
  principal?: string;
  /** The caller's keyed hash within the tenant: the fingerprint the tenant's admins see in a preview. */
  tenantPrincipal?: string;
  /** The OAuth client the token was issued to (RFC 9068 `client_id`). */
  clientId?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    mcpLog: McpLogFields | null;
  }
}

/** Adds fields to the request's access line. */
export function noteForLog(request: FastifyRequest, fields: McpLogFields): void {
  request.mcpLog = { ...request.mcpLog, ...fields };
}

/** Notes the JSON-RPC error code of a response body, if it is an error. */
export function noteRpcResponse(request: FastifyRequest, body: unknown): void {
  const error = (body as { error?: { code?: unknown } } | undefined)?.error;
  if (typeof error?.code === 'number') noteForLog(request, { rpcError: error.code });
}

import { createHmac } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal } from '@mcpgw/core';

/** What the MCP route learned about a request, for its access line. */
export interface McpLogFields {
  /** The JSON-RPC error code of the response, when it is an error. */
  rpcError?: number;
  /** A short keyed hash of the caller (issuer and subject): correlates lines without naming anyone. */
  principal?: string;
  /** The OAuth client the token was issued to (RFC 9068 `client_id`). */
  clientId?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    mcpLog: McpLogFields | null;
  }
}

const TENANT_ID = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Adds fields to the request's access line. */
export function noteForLog(request: FastifyRequest, fields: McpLogFields): void {
  request.mcpLog = { ...request.mcpLog, ...fields };
}

/** Notes the JSON-RPC error code of a response body, if it is an error. */
export function noteRpcResponse(request: FastifyRequest, body: unknown): void {
  const error = (body as { error?: { code?: unknown } } | undefined)?.error;
  if (typeof error?.code === 'number') noteForLog(request, { rpcError: error.code });
}

/**
 * A function from a verified caller to a 12-character fingerprint: an HMAC
 * keyed by the server secret, so a log reader cannot test guesses of a
 * subject against it, yet the same caller gets the same fingerprint on
 * every replica that shares SECRETS_KEY.
 */
export function createPrincipalFingerprint(secret: Buffer): (principal: Principal) => string {
  const key = createHmac('sha256', secret).update('mcpgw request-log principal fingerprint').digest();
  return (principal) =>
    createHmac('sha256', key).update(`${principal.issuer}\n${principal.subject}`).digest('base64url').slice(0, 12);
}

/**
 * One access line per request, at info: method, path (never the query, which
 * could hold a misplaced token), status, latency, the tenant of `/t/{tenant}/…`
 * and `/.well-known/…/t/{tenant}/…` paths, the MCP method (the `Mcp-Method`
 * header of 2026-07-28, else the body's `method`, which is all the initialize
 * era sends), and what the route noted: the JSON-RPC error code, the caller's
 * fingerprint and client id. Never a token, a claim value or a body.
 */
export function installRequestLog(app: FastifyInstance): void {
  app.decorateRequest('mcpLog', null);
  app.addHook('onResponse', async (request, reply) => {
    const tenant = (request.params as { tenant?: unknown } | undefined)?.tenant;
    request.log.info(
      {
        method: request.method,
        url: request.url.split('?')[0],
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
        ...(typeof tenant === 'string' && TENANT_ID.test(tenant) ? { tenant } : {}),
        ...optional('mcpMethod', mcpMethodOf(request)),
        ...request.mcpLog,
      },
      'request',
    );
  });
}

function mcpMethodOf(request: FastifyRequest): string | undefined {
  const method = (request.body as { method?: unknown } | undefined)?.method;
  if (typeof method === 'string') return method.slice(0, 100);
  const header = request.headers['mcp-method'];
  return typeof header === 'string' ? header.slice(0, 100) : undefined;
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}

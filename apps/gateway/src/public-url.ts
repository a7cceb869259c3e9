import type { EnvConfig } from '@mcpgw/config';

/**
 * The gateway's externally visible base URL: PUBLIC_URL, else http://HOST:PORT.
 * Tenant resource identifiers (RFC 8707 / RFC 9728) derive from it, never
 * from a request's Host header.
 */
export function publicBaseUrl(env: EnvConfig): string {
  if (env.PUBLIC_URL !== undefined) return env.PUBLIC_URL;
  const host = env.HOST.includes(':') && !env.HOST.startsWith('[') ? `[${env.HOST}]` : env.HOST;
  return `http://${host}:${env.PORT}`;
}

/** A tenant's canonical resource URI: what its tokens must carry in `aud`. */
export function tenantResourceUri(base: string, tenantId: string): string {
  return `${base}/t/${tenantId}/mcp`;
}

/** RFC 9728 section 3.1: the well-known path is inserted before the resource's path (PUBLIC_URL has none). */
export function protectedResourceMetadataUrl(base: string, tenantId: string): string {
  return `${base}/.well-known/oauth-protected-resource/t/${tenantId}/mcp`;
}

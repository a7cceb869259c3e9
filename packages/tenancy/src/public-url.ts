import type { EnvConfig } from '@mcpgw/config';

/**
 * The gateway's canonical base URL: PUBLIC_URL, else http://HOST:PORT. What
 * it logs at start, and the development issuer's origin. `port` is the port
 * actually bound, when known (PORT=0 binds a free one).
 */
export function publicBaseUrl(env: EnvConfig, port: number = env.PORT): string {
  if (env.PUBLIC_URL !== undefined) return env.PUBLIC_URL;
  // RFC 3986 section 3.2.2: an IPv6 literal in a URL is enclosed in brackets.
  const host = env.HOST.includes(':') && !env.HOST.startsWith('[') ? `[${env.HOST}]` : env.HOST;
  return `http://${host}:${port}`;
}

/** The loopback names a user may type for a loopback gateway; all reach the same socket. */
const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

/**
 * Every base URL the gateway answers as, the canonical one first. With
 * PUBLIC_URL, only that. On a loopback bind without it, the same port under
 * each loopback name as well: `localhost` and `127.0.0.1` name one server
 * here, and a user may type either. A client checks that the protected
 * resource metadata's `resource` is the URL it used (RFC 9728 §3.3), so each
 * name needs its own resource identifier; redirecting to one name cannot help,
 * since the client compares against the URL it was given, not where it ended up.
 */
export function publicBaseUrls(env: EnvConfig): string[] {
  const canonical = publicBaseUrl(env);
  if (env.PUBLIC_URL !== undefined) return [canonical];
  return [...new Set([canonical, ...LOOPBACK_NAMES.map((name) => `http://${name}:${env.PORT}`)])];
}

/**
 * The base URL a request addressed: one of {@link publicBaseUrls} named by its
 * Host header, else the canonical one. Never a name outside that list, so a
 * forged Host cannot mint a resource identifier (the Host/Origin guard has
 * already refused foreign names).
 */
export function createBaseUrlResolver(env: EnvConfig): (host: string | undefined) => string {
  const [canonical, ...aliases] = publicBaseUrls(env);
  const byHost = new Map(aliases.map((base) => [new URL(base).host, base]));
  return (host) => (host === undefined ? undefined : byHost.get(host.toLowerCase())) ?? (canonical as string);
}

/** A tenant's resource URI under one base URL: what its tokens carry in `aud`. */
export function tenantResourceUri(base: string, tenantId: string): string {
  return `${base}/t/${tenantId}/mcp`;
}

/** RFC 9728 section 3.1: the well-known path is inserted before the resource's path (PUBLIC_URL has none). */
export function protectedResourceMetadataUrl(base: string, tenantId: string): string {
  return `${base}/.well-known/oauth-protected-resource/t/${tenantId}/mcp`;
}

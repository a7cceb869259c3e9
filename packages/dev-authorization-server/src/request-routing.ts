/** Where a request under the issuer goes. */
export type DevRoute =
  | { kind: 'provider'; /** The path oidc-provider routes on: the URL minus the issuer path. */ url: string }
  | { kind: 'interaction'; uid: string }
  | { kind: 'not-found' };

/**
 * Maps a request URL to the provider's own path space. oidc-provider routes
 * on paths relative to where it is mounted (`/auth`, `/token`, ...), and it
 * serves its metadata at `/.well-known/openid-configuration` only; clients
 * look for it at the paths MCP authorization ("Authorization Server Metadata
 * Discovery") makes them try for an issuer with a path, in this order:
 * `/.well-known/oauth-authorization-server{path}` (RFC 8414 §3.1),
 * `/.well-known/openid-configuration{path}` (RFC 8414 §5) and
 * `{path}/.well-known/openid-configuration` (OpenID Connect Discovery §4).
 * The same document answers all of them (plus the RFC 8414 name appended
 * after the path, which older clients try): its `issuer` is what they check.
 */
export function routeDevRequest(mountPath: string, url: string): DevRoute {
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  const query = queryAt === -1 ? '' : url.slice(queryAt);
  const metadata = '/.well-known/openid-configuration';

  if (
    path === `/.well-known/oauth-authorization-server${mountPath}` ||
    path === `/.well-known/openid-configuration${mountPath}` ||
    path === `${mountPath}/.well-known/oauth-authorization-server`
  ) {
    return { kind: 'provider', url: `${metadata}${query}` };
  }
  if (path !== mountPath && !path.startsWith(`${mountPath}/`)) return { kind: 'not-found' };

  const inner = path.slice(mountPath.length) || '/';
  const interaction = /^\/interaction\/([\w-]+)$/.exec(inner);
  if (interaction?.[1] !== undefined) return { kind: 'interaction', uid: interaction[1] };
  return { kind: 'provider', url: `${inner}${query}` };
}

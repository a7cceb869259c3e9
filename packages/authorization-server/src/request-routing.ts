import { CALLBACK_PATH, INTERACTION_PATH } from './authorization-server-urls.js';

/** Where a request to some tenant's authorization server goes. */
export type AuthorizationServerRoute =
  | {
      kind: 'provider';
      tenantId: string;
      /** The path oidc-provider routes on: the URL minus the issuer's path, query kept. */
      url: string;
    }
  | { kind: 'interaction'; tenantId: string; uid: string }
  | { kind: 'callback'; tenantId: string }
  | { kind: 'not-found' };

// A tenant id is a slug (packages/config); anything else names no tenant.
const TENANT = '([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)';
const ISSUER_PATH = new RegExp(`^/t/${TENANT}/oauth(/.*)?$`);
const WELL_KNOWN = new RegExp(`^/\\.well-known/(?:oauth-authorization-server|openid-configuration)/t/${TENANT}/oauth$`);
const METADATA = '/.well-known/openid-configuration';

/**
 * Maps a request URL to a tenant's provider and its own path space.
 * oidc-provider routes on paths relative to where it is mounted (`/authorize`,
 * `/token`, ...), and serves its metadata at `/.well-known/openid-configuration`
 * only; clients look for it at the paths MCP authorization ("Authorization
 * Server Metadata Discovery") makes them try for an issuer with a path, in this
 * order: `/.well-known/oauth-authorization-server{path}` (RFC 8414 section
 * 3.1), `/.well-known/openid-configuration{path}` (RFC 8414 section 5) and
 * `{path}/.well-known/openid-configuration` (OpenID Connect Discovery 1.0
 * section 4). One document answers all of them: its `issuer` is what they
 * check (RFC 8414 section 3.3).
 */
export function routeAuthorizationServerRequest(url: string): AuthorizationServerRoute {
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  const query = queryAt === -1 ? '' : url.slice(queryAt);

  const wellKnown = WELL_KNOWN.exec(path);
  if (wellKnown?.[1] !== undefined) return { kind: 'provider', tenantId: wellKnown[1], url: `${METADATA}${query}` };

  const match = ISSUER_PATH.exec(path);
  if (match?.[1] === undefined) return { kind: 'not-found' };
  const tenantId = match[1];
  const inner = match[2] ?? '/';
  if (inner === CALLBACK_PATH) return { kind: 'callback', tenantId };
  const interaction = new RegExp(`^${INTERACTION_PATH}/([\\w-]{1,100})$`).exec(inner);
  if (interaction?.[1] !== undefined) return { kind: 'interaction', tenantId, uid: interaction[1] };
  return { kind: 'provider', tenantId, url: `${inner}${query}` };
}

/**
 * Where a tenant's hosted authorization server lives (docs/adr/0011): under
 * the tenant's own path on the gateway's origin, so one origin serves every
 * tenant's issuer and nothing but the path tells them apart.
 */

/** The issuer's path below the base URL: `/t/{tenant}/oauth`. */
export function authorizationServerPath(tenantId: string): string {
  return `/t/${tenantId}/oauth`;
}

/**
 * The issuer identifier, `${base}/t/{tenant}/oauth`: what `iss` in its tokens
 * and in authorization responses (RFC 9207) is, and what its metadata's
 * `issuer` equals (RFC 8414 section 3.3).
 */
export function authorizationServerIssuer(base: string, tenantId: string): string {
  return `${base}${authorizationServerPath(tenantId)}`;
}

/**
 * RFC 8414 section 3.1: the metadata of an issuer with a path is at the
 * well-known prefix inserted between the host and the path.
 */
export function authorizationServerMetadataUrl(base: string, tenantId: string): string {
  return `${base}/.well-known/oauth-authorization-server${authorizationServerPath(tenantId)}`;
}

/**
 * The OpenID Connect discovery documents MCP clients also try for an issuer
 * with a path (MCP 2026-07-28, Authorization, "Authorization Server Metadata
 * Discovery"): path-inserted (RFC 8414 section 5) and path-appended (OpenID
 * Connect Discovery 1.0 section 4).
 */
export function openIdConfigurationUrls(base: string, tenantId: string): [string, string] {
  const path = authorizationServerPath(tenantId);
  return [`${base}/.well-known/openid-configuration${path}`, `${base}${path}/.well-known/openid-configuration`];
}

/**
 * The endpoints under the issuer, as oidc-provider's `routes` (relative to
 * the issuer). Named for what they do rather than oidc-provider's defaults
 * (`/auth`, `/reg`, `/token/revocation`).
 */
export const ENDPOINT_PATHS = {
  authorization: '/authorize',
  token: '/token',
  jwks: '/jwks',
  registration: '/register',
  revocation: '/revoke',
  userinfo: '/userinfo',
  end_session: '/logout',
} as const;

/** The interaction pages (`GET` shows one, `POST` takes its forms): `${issuer}/interaction/{uid}`. */
export const INTERACTION_PATH = '/interaction';

/** Where the upstream identity provider sends the user back after signing in: `${issuer}/callback`. */
export const CALLBACK_PATH = '/callback';

import type { CookieSerializeOptions } from '@fastify/cookie';
import { fastifyCookie } from '@fastify/cookie';

/** Where a tenant's admin API lives; its session cookie is scoped to this path and below. */
export function tenantAdminPath(tenantId: string): string {
  return `/admin/v1/tenants/${tenantId}`;
}

/** The tenant a request path addresses under `/admin/v1/tenants/{tenantId}`, if any. */
export function tenantOfAdminPath(url: string): string | undefined {
  return /^\/admin\/v1\/tenants\/([a-z0-9-]{1,63})(?:[/?#]|$)/.exec(url)?.[1];
}

/**
 * The name prefix a cookie set over https earns (RFC 6265bis section
 * 4.1.3): `__Host-` when it is host-only with `Path=/` (no Domain: none of
 * ours has one), else `__Secure-`. A browser then refuses a cookie of that
 * name from a plain-http response, or, for `__Host-`, one scoped to a
 * sibling host or a narrower path, so a network attacker or a neighbouring
 * subdomain cannot plant one. Over plain http there is no prefix (a prefixed
 * cookie must be `Secure`).
 */
export function cookieName(name: string, secure: boolean, path: string): string {
  if (!secure) return name;
  return path === '/' ? `__Host-${name}` : `__Secure-${name}`;
}

/**
 * The session cookie's name: `__Secure-` over https; it is scoped to one
 * tenant's admin path, which `__Host-` would forbid.
 */
export function sessionCookieName(secure: boolean): string {
  // The path is per tenant; any tenant's gives the same prefix.
  return cookieName('mcpgw-admin-session', secure, tenantAdminPath('any'));
}

/** The sign-in flow's `state` and PKCE verifier cookies, scoped like the session cookie to the tenant's admin path. */
export function flowCookieNames(secure: boolean): { state: string; verifier: string } {
  const path = tenantAdminPath('any');
  return {
    state: cookieName('mcpgw-admin-oauth-state', secure, path),
    verifier: cookieName('mcpgw-admin-oauth-verifier', secure, path),
  };
}

/**
 * The session cookie's attributes (RFC 6265bis section 4.1.2):
 * - `HttpOnly`: page scripts never read it; they get the CSRF token from `GET .../session`.
 * - `SameSite=Lax`: withheld from cross-site subrequests and cross-site POST,
 *   PUT, PATCH and DELETE (section 5.2 and 8.8.2), yet sent on the top-level
 *   navigation that ends the sign-in, which arrives by way of the identity
 *   provider's redirect: Strict would land every person signed out after the
 *   callback. Cross-site requests that change state are refused by the CSRF
 *   token and Origin check in any case; SameSite is the second line.
 * - `Secure` when PUBLIC_URL is https.
 * - `Path` the tenant's admin path: the browser sends it to that tenant's
 *   admin API only (path-match, section 5.1.4), never to another tenant's.
 * - `Max-Age` the session's remaining lifetime, so the browser drops it when it ends.
 */
export function sessionCookieOptions(tenantId: string, secure: boolean, maxAgeSeconds: number): CookieSerializeOptions {
  return { path: tenantAdminPath(tenantId), httpOnly: true, sameSite: 'lax', secure, maxAge: maxAgeSeconds };
}

/** The value of one cookie from a request's Cookie header, read without @fastify/cookie being registered there. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined || header === '') return undefined;
  return fastifyCookie.parse(header)[name];
}

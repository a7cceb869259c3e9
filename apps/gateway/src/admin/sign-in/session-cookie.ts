import type { CookieSerializeOptions } from '@fastify/cookie';
import { fastifyCookie } from '@fastify/cookie';

/** Where a tenant's admin API lives; its session cookie is scoped to this path and below. */
export function tenantAdminPath(tenantId: string): string {
  return `/admin/v1/tenants/${tenantId}`;
}

/** Where the session cookie is sent: the admin API and the console's pages (`/admin/tenants/{tenantId}/…`). */
export const SESSION_COOKIE_PATH = '/admin';

/**
 * The tenant a request path addresses under `/admin/v1/tenants/{tenantId}`
 * (the admin API) or `/admin/tenants/{tenantId}` (the console), if any.
 */
export function tenantOfAdminPath(url: string): string | undefined {
  return /^\/admin\/(?:v1\/)?tenants\/([a-z0-9-]{1,63})(?:[/?#]|$)/.exec(url)?.[1];
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
 * The session cookie's name: `__Secure-` over https; its path is `/admin`,
 * which `__Host-` (Path=/ only) would forbid.
 */
export function sessionCookieName(secure: boolean): string {
  return cookieName('mcpgw-admin-session', secure, SESSION_COOKIE_PATH);
}

/** Where the sign-in lands afterwards (a console page, `return_to`), kept beside the flow's `state`. */
export function returnToCookieName(secure: boolean): string {
  return cookieName('mcpgw-admin-return-to', secure, tenantAdminPath('any'));
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
 * - `Path=/admin`: the admin API and the console's pages (path-match,
 *   section 5.1.4). The browser sends it to every tenant's admin paths, so
 *   the tenant is sealed inside it: a session of A addressing B is answered
 *   as a tenant that does not exist (session-authenticator.ts). One browser
 *   holds one admin session at a time.
 * - `Max-Age` the session's remaining lifetime, so the browser drops it when it ends.
 */
export function sessionCookieOptions(secure: boolean, maxAgeSeconds: number): CookieSerializeOptions {
  return { path: SESSION_COOKIE_PATH, httpOnly: true, sameSite: 'lax', secure, maxAge: maxAgeSeconds };
}

/** The value of one cookie from a request's Cookie header, read without @fastify/cookie being registered there. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined || header === '') return undefined;
  return fastifyCookie.parse(header)[name];
}

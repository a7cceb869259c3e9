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
 * The session cookie's name. Over https it carries the `__Secure-` prefix
 * (RFC 6265bis section 4.1.3.1): a browser then refuses it from a plain-http
 * response, so a network attacker cannot plant one. (`__Host-` would also
 * forbid the tenant-scoped Path this cookie needs.)
 */
export function sessionCookieName(secure: boolean): string {
  return secure ? '__Secure-mcpgw-admin-session' : 'mcpgw-admin-session';
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

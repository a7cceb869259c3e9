import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The CSRF token of an interaction's forms (RFC 6749 section 10.12; OWASP's
 * "HMAC based token" pattern): an HMAC-SHA256 of the interaction's uid under
 * a server key, so any replica can check it with nothing stored, and a token
 * seen on one interaction's page is worth nothing on another. The uid is
 * random and lives only as long as the interaction (oidc-provider's
 * `ttl.Interaction`), and the page is never cached nor framed.
 */
const LABEL = 'mcpgw authorization-server interaction form v1\0';

/** The smallest key accepted: 256 bits (RFC 2104 section 3: at least the hash's output length). */
export const CSRF_KEY_BYTES = 32;

export function assertCsrfKey(key: Uint8Array): void {
  if (key.byteLength < CSRF_KEY_BYTES) {
    throw new Error(`authorization server: the CSRF key must be at least ${CSRF_KEY_BYTES} bytes`);
  }
}

/** The token the pages of interaction `uid` carry in their forms (base64url). */
export function csrfTokenFor(key: Uint8Array, uid: string): string {
  return createHmac('sha256', key).update(LABEL).update(uid).digest('base64url');
}

/** True when `token` is the one {@link csrfTokenFor} made for `uid`; compared in constant time. */
export function isCsrfTokenValid(key: Uint8Array, uid: string, token: unknown): boolean {
  if (typeof token !== 'string') return false;
  const expected = Buffer.from(csrfTokenFor(key, uid));
  const given = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

import { randomBytes } from 'node:crypto';
import { createSecretBox } from '@mcpgw/control-plane';
import type { AdminPrincipal } from './admin-principal.js';

/** A tenant admin signed in from a browser, as the sealed cookie carries it. */
export interface AdminSession {
  /**
   * The session's random id, recorded in the control plane (AdminSessionRows):
   * the session lives only while its record does, so it can be ended on the
   * server (sign-out, binding removed, tenant suspended or deleted).
   */
  readonly id: string;
  readonly tenantId: string;
  readonly principal: Extract<AdminPrincipal, { kind: 'tenant-admin' }>;
  /**
   * The verified scopes and groups of the access token at sign-in: every
   * request re-matches them against the tenant's current admin role
   * bindings, so deleting a binding ends the sessions it admitted.
   */
  readonly scopes: readonly string[];
  readonly groups: readonly string[];
  /** When the session ends, in ms since the epoch: the access token's expiry or the tenant's maximum, whichever is first. */
  readonly expiresAt: number;
  /** The synchronizer token's secret: state-changing requests must echo it in `x-csrf-token`. */
  readonly csrfToken: string;
}

/** Why a cookie gave no session. */
export type OpenedSession = { ok: true; session: AdminSession } | { ok: false; reason: 'invalid' | 'expired' };

export interface SessionSealer {
  seal(session: AdminSession): string;
  open(cookie: string): OpenedSession;
}

/** Associated data of every session; the tenant is checked from inside the sealed value. */
const BOUND_TO = 'mcpgw admin session cookie';
/** A cookie holds at most 4096 bytes (RFC 6265bis section 5.6); anything longer is not ours. */
const MAX_COOKIE_LENGTH = 4096;

/**
 * Seals sessions into cookie values with AES-256-GCM (the control plane's
 * secret box) under `ServerKeys.adminSession`, derived from SECRETS_KEY for
 * this purpose alone, so any replica opens what another sealed; no replica keeps session
 * state, and the control plane all share keeps one record per session
 * (its id, checked on each request, deleted to end it).
 * `keys[0]` seals; every listed key opens (rotation).
 * Holds the id, principal, tenant, expiry, CSRF secret and the token's verified
 * scopes and groups; never the identity provider's tokens, which nothing
 * after sign-in needs.
 */
export function createSessionSealer(keys: readonly Uint8Array[], now: () => number = Date.now): SessionSealer {
  const box = createSecretBox(keys);
  return {
    seal: (session) =>
      box.seal(
        JSON.stringify({
          d: session.id,
          t: session.tenantId,
          i: session.principal.issuer,
          s: session.principal.subject,
          x: session.expiresAt,
          c: session.csrfToken,
          p: session.scopes,
          g: session.groups,
        }),
        BOUND_TO,
      ),
    open(cookie) {
      if (cookie.length > MAX_COOKIE_LENGTH) return { ok: false, reason: 'invalid' };
      let fields: unknown;
      try {
        fields = JSON.parse(box.open(cookie, BOUND_TO));
      } catch {
        return { ok: false, reason: 'invalid' };
      }
      const { d, t, i, s, x, c, p, g } = (fields ?? {}) as Record<string, unknown>;
      // A cookie sealed before sessions carried scopes and groups, or before they were recorded (an id),
      // cannot be re-checked or revoked: it is refused, not trusted.
      if (
        typeof d !== 'string' ||
        typeof t !== 'string' ||
        typeof i !== 'string' ||
        typeof s !== 'string' ||
        typeof c !== 'string' ||
        !isStringList(p) ||
        !isStringList(g)
      ) {
        return { ok: false, reason: 'invalid' };
      }
      if (typeof x !== 'number' || x <= now()) return { ok: false, reason: 'expired' };
      return {
        ok: true,
        session: {
          id: d,
          tenantId: t,
          principal: { kind: 'tenant-admin', tenantId: t, issuer: i, subject: s, via: 'session' },
          expiresAt: x,
          csrfToken: c,
          scopes: p,
          groups: g,
        },
      };
    },
  };
}

const isStringList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string');

/** A fresh session id: 256 random bits (RFC 4086 section 8), base64url; unguessable, so never enumerable. */
export function newSessionId(): string {
  return randomBytes(32).toString('base64url');
}

/** A fresh CSRF secret: 256 random bits (RFC 4086 section 8), base64url. */
export function newCsrfToken(): string {
  return randomBytes(32).toString('base64url');
}

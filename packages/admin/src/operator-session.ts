import { createSecretBox } from '@mcpgw/control-plane';
import type { AdminPrincipal } from './admin-principal.js';

/** An operator signed in from a browser: its cookie and its control-plane record together (docs/admin-console.md, "Operators"). */
export interface OperatorSession {
  /**
   * The session's random id, recorded in the control plane
   * (OperatorSessionRows): the session lives only while its record does, so
   * signing out ends it on the server and a copied cookie stops working.
   */
  readonly id: string;
  readonly principal: Extract<AdminPrincipal, { kind: 'operator' }>;
  /** ms since the epoch: the operator token's expiry, at most an hour after sign-in (from the record). */
  readonly expiresAt: number;
  /** The synchronizer token's secret: every console form posts it back. */
  readonly csrfToken: string;
}

/** What an operator's sealed cookie carries: the session's id and its CSRF secret, nothing else. */
export interface OperatorSessionCookie {
  readonly id: string;
  readonly csrfToken: string;
}

export type OpenedOperatorSession = { ok: true; cookie: OperatorSessionCookie } | { ok: false };

export interface OperatorSessionSealer {
  seal(cookie: OperatorSessionCookie): string;
  open(cookie: string): OpenedOperatorSession;
}

/**
 * Its own associated data, so that a tenant admin's sealed cookie never
 * opens as an operator's, nor the other way round, though both are sealed
 * under `ServerKeys.adminSession` (ADR 0009: one key per purpose; the
 * purpose is the browser session, and the binding tells the two apart).
 * The "v2" marks cookies that carry a recorded session's id: a cookie sealed
 * when operator sessions lived wholly in the cookie opens as nothing.
 */
const BOUND_TO = 'mcpgw operator session cookie v2';
const MAX_COOKIE_LENGTH = 4096;

/**
 * Seals operator session cookies with AES-256-GCM (the control plane's
 * secret box); `keys[0]` seals, every key opens. The cookie is opaque to the
 * browser and holds only the session's id and CSRF secret; who signed in and
 * until when are in the session's control-plane record.
 */
export function createOperatorSessionSealer(keys: readonly Uint8Array[]): OperatorSessionSealer {
  const box = createSecretBox(keys);
  return {
    seal: (cookie) => box.seal(JSON.stringify({ d: cookie.id, c: cookie.csrfToken }), BOUND_TO),
    open(cookie) {
      if (cookie.length > MAX_COOKIE_LENGTH) return { ok: false };
      let fields: unknown;
      try {
        fields = JSON.parse(box.open(cookie, BOUND_TO));
      } catch {
        return { ok: false };
      }
      const { d, c } = (fields ?? {}) as Record<string, unknown>;
      if (typeof d !== 'string' || typeof c !== 'string' || d === '' || c === '') return { ok: false };
      return { ok: true, cookie: { id: d, csrfToken: c } };
    },
  };
}

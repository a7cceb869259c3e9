import { createSecretBox } from '@mcpgw/control-plane';
import type { AdminPrincipal } from './admin-principal.js';

/** An operator signed in from a browser, as the sealed cookie carries it (docs/admin-console.md, "Operators"). */
export interface OperatorSession {
  readonly principal: Extract<AdminPrincipal, { kind: 'operator' }>;
  /** ms since the epoch: the operator token's expiry, at most an hour after sign-in. */
  readonly expiresAt: number;
  /** The synchronizer token's secret: every console form posts it back. */
  readonly csrfToken: string;
}

export type OpenedOperatorSession = { ok: true; session: OperatorSession } | { ok: false };

export interface OperatorSessionSealer {
  seal(session: OperatorSession): string;
  open(cookie: string): OpenedOperatorSession;
}

/**
 * Its own associated data, so that a tenant admin's sealed cookie never
 * opens as an operator's, nor the other way round, though both are sealed
 * under `ServerKeys.adminSession` (ADR 0009: one key per purpose; the
 * purpose is the browser session, and the binding tells the two apart).
 */
const BOUND_TO = 'mcpgw operator session cookie';
const MAX_COOKIE_LENGTH = 4096;

/** Seals operator sessions with AES-256-GCM (the control plane's secret box); `keys[0]` seals, every key opens. */
export function createOperatorSessionSealer(
  keys: readonly Uint8Array[],
  now: () => number = Date.now,
): OperatorSessionSealer {
  const box = createSecretBox(keys);
  return {
    seal: (session) =>
      box.seal(
        JSON.stringify({
          i: session.principal.issuer,
          s: session.principal.subject,
          x: session.expiresAt,
          c: session.csrfToken,
        }),
        BOUND_TO,
      ),
    open(cookie) {
      if (cookie.length > MAX_COOKIE_LENGTH) return { ok: false };
      let fields: unknown;
      try {
        fields = JSON.parse(box.open(cookie, BOUND_TO));
      } catch {
        return { ok: false };
      }
      const { i, s, x, c } = (fields ?? {}) as Record<string, unknown>;
      if (typeof i !== 'string' || typeof s !== 'string' || typeof c !== 'string') return { ok: false };
      if (typeof x !== 'number' || x <= now()) return { ok: false };
      return {
        ok: true,
        session: { principal: { kind: 'operator', issuer: i, subject: s, via: 'session' }, expiresAt: x, csrfToken: c },
      };
    },
  };
}

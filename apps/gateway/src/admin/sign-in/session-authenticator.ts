import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AdminPrincipal } from '@mcpgw/admin';
import type { AdminAuthenticator } from '../admin-authenticator.js';
import type { AdminSession, SessionSealer } from '@mcpgw/admin';
import { csrfRefusal, isStateChanging } from './csrf.js';
import { readCookie, sessionCookieName, tenantOfAdminPath } from './session-cookie.js';
import type { ProblemError } from './sign-in-problem.js';
import { isProblemError, SignInProblem, sendProblem } from './sign-in-problem.js';

export interface SessionAuthOptions {
  sealer: SessionSealer;
  /** Whether cookies are `Secure` (PUBLIC_URL is https): it picks the cookie's name. */
  secure: boolean;
  /** Whether the tenant is served here and has browser sign-in; a session of any other tenant is worth nothing. */
  signInEnabled(tenantId: string): boolean;
  /** The gateway's own origin as this request addressed it (its Host names one of the gateway's base URLs). */
  originOf(request: FastifyRequest): string;
  /** The refusal of a tenant that does not exist, thrown for a session of another tenant too. */
  notFound(): ProblemError;
  /**
   * Re-checks the signed-in person against the tenant's current issuers and
   * admin role bindings, as the bearer path does on every request; throws
   * the refusal (401 issuer gone, 403 no binding left).
   */
  recheck(session: AdminSession): Promise<void>;
  /**
   * Whether the session's record still exists in the control plane: gone
   * after sign-out (on any replica), or once its binding, or its tenant, is
   * removed or the tenant suspended.
   */
  isLive(session: AdminSession): Promise<boolean>;
}

/** The sign-in's own 404 for a tenant that does not exist or has no browser sign-in. */
export function tenantNotFound(): SignInProblem {
  return new SignInProblem('not-found', 'No such tenant, or it has no browser sign-in.');
}

/**
 * The browser session as an admin authenticator, and the CSRF guard for the
 * admin API's state-changing routes (docs/admin-sign-in.md).
 */
export interface SessionAuth {
  /**
   * Recognises the session cookie on `/admin/v1/tenants/{tenantId}/...`.
   * `undefined` ("not mine") when the request has an Authorization header
   * (bearer callers are the bearer authenticator's) or no session cookie.
   * Throws a ProblemError (`statusCode`, `problem`): 401 for a cookie that
   * does not open or has expired; the `notFound` refusal, exactly as for a
   * missing tenant, for a session of another tenant or of a tenant without
   * sign-in; 403 for a state-changing request without its CSRF token or
   * from another origin; and the `recheck` refusal for a person the tenant's
   * current admin role bindings no longer admit.
   */
  readonly authenticator: AdminAuthenticator;
  /**
   * An `onRequest` hook for the admin API's routes: refuses a state-changing
   * request authenticated by session cookie that fails the CSRF check, with
   * an RFC 9457 problem (403), before its body is read or anything runs.
   * Requests with an Authorization header, safe methods, and requests without
   * a session cookie pass untouched (authentication decides about them).
   */
  csrfGuard(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined>;
  /** The session a request carries, re-checked, for `GET .../session`: undefined without a cookie; throws as `authenticate` does. */
  currentSession(request: FastifyRequest): Promise<AdminSession | undefined>;
  /**
   * The session and CSRF check without the binding re-check, for logout:
   * a person no longer admitted may still end their session.
   */
  csrfChecked(request: FastifyRequest): AdminSession | undefined;
}

export function createSessionAuth(options: SessionAuthOptions): SessionAuth {
  const name = sessionCookieName(options.secure);

  const sessionOf = (request: FastifyRequest): AdminSession | undefined => {
    const tenantId = tenantOfAdminPath(request.url);
    if (tenantId === undefined) return undefined;
    const cookie = readCookie(request.headers.cookie, name);
    if (cookie === undefined) return undefined;
    const opened = options.sealer.open(cookie);
    if (!opened.ok) {
      throw new SignInProblem(
        'session-invalid',
        opened.reason === 'expired'
          ? 'The session has expired: sign in again.'
          : 'The session cookie is not valid here: sign in again.',
      );
    }
    // A cookie copied or replayed onto another tenant's path names its own tenant inside the sealed value.
    if (opened.session.tenantId !== tenantId || !options.signInEnabled(tenantId)) throw options.notFound();
    return opened.session;
  };

  const checked = (request: FastifyRequest): AdminSession | undefined => {
    if (request.headers.authorization !== undefined) return undefined;
    const session = sessionOf(request);
    if (session === undefined || !isStateChanging(request.method)) return session;
    const refusal = csrfRefusal(request, session, options.originOf(request));
    if (refusal !== undefined) throw refusal;
    return session;
  };

  /** The per-request checks of an opened session: current bindings and issuers, then its server-side record. */
  const admitted = async (session: AdminSession): Promise<void> => {
    await options.recheck(session);
    if (!(await options.isLive(session))) {
      throw new SignInProblem('session-invalid', 'The session has ended (signed out or revoked): sign in again.');
    }
  };

  return {
    authenticator: {
      async authenticate(request): Promise<AdminPrincipal | undefined> {
        const session = checked(request);
        if (session !== undefined) await admitted(session);
        return session?.principal;
      },
    },
    async csrfGuard(request, reply) {
      if (!isStateChanging(request.method)) return undefined;
      try {
        checked(request);
      } catch (error) {
        // Only the CSRF refusal is this guard's; a bad cookie is left to authentication to answer.
        if (error instanceof SignInProblem && error.problem.code === 'csrf-refused') return sendProblem(reply, error);
        if (!isProblemError(error)) throw error;
      }
      return undefined;
    },
    async currentSession(request) {
      const session = sessionOf(request);
      if (session !== undefined) await admitted(session);
      return session;
    },
    csrfChecked: checked,
  };
}

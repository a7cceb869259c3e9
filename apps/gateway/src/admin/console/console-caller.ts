import type { FastifyRequest } from 'fastify';
import type { AdminPrincipal, AdminSession, ConsoleViewer, OperatorSession } from '@mcpgw/admin';
import type { AdminAuthenticator } from '../admin-authenticator.js';
import type { ConsoleSignIn } from '../sign-in/admin-sign-in.js';
import type { OperatorSignIn } from '../sign-in/operator-sign-in.js';
import type { SessionAuth } from '../sign-in/session-authenticator.js';
import { csrfRefusal, isStateChanging } from '../sign-in/csrf.js';

/** Who is on a console page: the admin principal, and the browser session when signed in by cookie. */
export interface ConsoleCaller {
  readonly principal: AdminPrincipal;
  readonly session?: AdminSession;
  /** An operator signed in in the browser (sign-in/operator-sign-in.ts). */
  readonly operatorSession?: OperatorSession;
  readonly viewer: ConsoleViewer;
}

export interface ConsoleCallers {
  /**
   * The caller of a request, or undefined when it names none. An API client's
   * bearer token (an operator's, say) is asked first, as on the admin API;
   * then the browser session of the tenant the path names. Throws the
   * refusals the admin API throws (a session of another tenant: the 404 of a
   * tenant that does not exist; an expired one: 401 `session-invalid`).
   */
  callerOf(request: FastifyRequest): Promise<ConsoleCaller | undefined>;
  /**
   * The CSRF check of a form a session posted (docs/admin-sign-in.md, CSRF):
   * the same Origin and Sec-Fetch-Site rules as the admin API, with the
   * synchronizer token in the form's hidden `csrf` field. Bearer callers are
   * not subject to it: a browser never attaches that header on its own.
   */
  checkForm(request: FastifyRequest, caller: ConsoleCaller, token: unknown): void;
}

export function createConsoleCallers(options: {
  bearer: AdminAuthenticator;
  session: SessionAuth;
  signIn: ConsoleSignIn;
  operator: OperatorSignIn;
}): ConsoleCallers {
  return {
    async callerOf(request) {
      const byToken = await options.bearer.authenticate(request);
      if (byToken !== undefined)
        return { principal: byToken, viewer: { kind: byToken.kind, subject: byToken.subject } };
      if (request.headers.authorization !== undefined) return undefined;
      // An operator's session before a tenant admin's: one browser may hold both, and the operator may do all.
      const operatorSession = await options.operator.sessionOf(request);
      if (operatorSession !== undefined) {
        const { principal, csrfToken } = operatorSession;
        return { principal, operatorSession, viewer: { kind: 'operator', subject: principal.subject, csrfToken } };
      }
      const session = await options.session.currentSession(request);
      if (session === undefined) return undefined;
      return {
        principal: session.principal,
        session,
        viewer: { kind: 'tenant-admin', subject: session.principal.subject, csrfToken: session.csrfToken },
      };
    },
    checkForm(request, caller, token) {
      const session = caller.session ?? caller.operatorSession;
      if (session === undefined || !isStateChanging(request.method)) return;
      const refusal = csrfRefusal(request, session, options.signIn.originOf(request), {
        token,
        where: "the form's csrf field (reload the page)",
      });
      if (refusal !== undefined) throw refusal;
    },
  };
}

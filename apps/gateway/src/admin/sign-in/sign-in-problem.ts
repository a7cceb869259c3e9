import type { FastifyReply } from 'fastify';
import { PROBLEM_TYPE_PREFIX } from '../problem.js';

/**
 * The refusals of the browser sign-in and its session, each an RFC 9457
 * problem type in the admin API's vocabulary (`urn:mcpgw:admin:problem:`);
 * `not-found` is the admin API's own type, the others are the sign-in's.
 */
export const SIGN_IN_PROBLEMS = {
  /** The tenant does not exist, or has no browser sign-in: the same answer, so neither is revealed. */
  'not-found': { status: 404, title: 'Not Found' },
  /** No session cookie on a route that needs one. */
  'session-required': { status: 401, title: 'Sign-in required' },
  /** A session cookie that does not open (tampered, sealed with an unknown key) or has expired. */
  'session-invalid': { status: 401, title: 'Session invalid or expired' },
  /** A state-changing request by session without the session's CSRF token or from another origin. */
  'csrf-refused': { status: 403, title: 'Cross-site request refused' },
  /** The callback's `state` is not the one this browser was given, or the code exchange failed. */
  'sign-in-failed': { status: 400, title: 'Sign-in failed' },
  /** The identity provider cannot be reached or answers nonsense. */
  'identity-provider-unavailable': { status: 502, title: 'Identity provider unavailable' },
  /** Signed in, but not as an admin of this tenant. */
  'not-an-admin': { status: 403, title: 'Not an admin of this tenant' },
} as const;

export type SignInProblemType = keyof typeof SIGN_IN_PROBLEMS;

/** An RFC 9457 problem details object (section 3.1 members, plus `code`, an extension member, section 3.2). */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: SignInProblemType;
}

/** Any refusal that knows its status and RFC 9457 body: ours, or the admin API's missing-tenant one. */
export interface ProblemError extends Error {
  readonly statusCode: number;
  readonly problem: object;
}

export function isProblemError(error: unknown): error is ProblemError {
  return (
    error instanceof Error &&
    typeof (error as { statusCode?: unknown }).statusCode === 'number' &&
    typeof (error as { problem?: unknown }).problem === 'object'
  );
}

/**
 * A refusal of the session authenticator or the CSRF guard: thrown, with
 * `statusCode` (what Fastify and the admin API read) and the problem to send.
 */
export class SignInProblem extends Error implements ProblemError {
  readonly statusCode: number;
  readonly problem: ProblemDetails;

  constructor(code: SignInProblemType, detail: string) {
    super(detail);
    this.name = 'SignInProblem';
    const { status, title } = SIGN_IN_PROBLEMS[code];
    this.statusCode = status;
    // RFC 9457 section 3.1.1: a URI reference naming the type; the admin API's one vocabulary of URNs.
    this.problem = { type: `${PROBLEM_TYPE_PREFIX}${code}`, title, status, detail, code };
  }
}

/** Sends a problem as `application/problem+json` (RFC 9457 section 3), never cached. */
export function sendProblem(reply: FastifyReply, problem: ProblemError): FastifyReply {
  return reply
    .code(problem.statusCode)
    .header('cache-control', 'no-store')
    .type('application/problem+json')
    .send(problem.problem);
}

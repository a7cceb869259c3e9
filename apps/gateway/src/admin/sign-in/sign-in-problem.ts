import type { FastifyReply } from 'fastify';
import type { ProblemTypeOf } from '@mcpgw/admin';
import { problemDocument } from '@mcpgw/admin';

/**
 * The refusals of the browser sign-in and its session: the registry's
 * `sign-in` problem types (problem-registry.ts), and the admin API's
 * `not-found` for a tenant that does not exist or has no browser sign-in.
 */
export type SignInProblemType = ProblemTypeOf<'sign-in'> | 'not-found';

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
    // The registry's type, title and status; the type's name again as the `code` extension member.
    this.problem = { ...problemDocument(code, detail), code };
    this.statusCode = this.problem.status;
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

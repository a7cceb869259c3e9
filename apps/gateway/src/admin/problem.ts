import type { FastifyReply } from 'fastify';

/**
 * One offending input of a refused request (RFC 9457 section 3.2 extension
 * member `errors`): `pointer` is a JSON Pointer (RFC 6901) into the request
 * body; `parameter` names a path or query parameter, `header` a request
 * header; `location` is a path into the tenant's whole configuration (the
 * bootstrap file's notation, e.g. `grants[0].allow[0].source`) when the
 * problem lies outside what the request wrote.
 */
export interface ProblemFieldError {
  readonly detail: string;
  readonly pointer?: string;
  readonly parameter?: string;
  readonly header?: string;
  readonly location?: string;
}

/** The admin API's problem types (docs/admin-api.md, "Problems"): each one HTTP status. */
export const PROBLEM_TYPES = {
  'invalid-request': { status: 400, title: 'The request is malformed' },
  unauthenticated: { status: 401, title: 'Authentication required' },
  forbidden: { status: 403, title: 'Not allowed' },
  'not-found': { status: 404, title: 'Not found' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  conflict: { status: 409, title: 'Conflict' },
  'precondition-failed': { status: 412, title: 'Precondition failed' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  'validation-failed': { status: 422, title: 'The request content is invalid' },
  'precondition-required': { status: 428, title: 'Precondition required' },
  'too-many-requests': { status: 429, title: 'Too many requests' },
  'server-fault': { status: 500, title: 'Internal server error' },
  unavailable: { status: 503, title: 'Service unavailable' },
} as const;

export type ProblemType = keyof typeof PROBLEM_TYPES;

/** The one namespace of the admin surface's problem types: the API's and its browser sign-in's. */
export const PROBLEM_TYPE_PREFIX = 'urn:mcpgw:admin:problem:';

/** RFC 9457 section 3.1.1: a URI identifying the problem type (not dereferenced). */
export const problemTypeUri = (type: ProblemType): string => `${PROBLEM_TYPE_PREFIX}${type}`;

/** A refusal of the admin API, sent as `application/problem+json` (RFC 9457). */
export class AdminProblem extends Error {
  override readonly name = 'AdminProblem';
  readonly status: number;

  constructor(
    readonly type: ProblemType,
    /** RFC 9457 section 3.1.4: specific to this occurrence; never a credential or internal detail. */
    readonly detail: string,
    readonly errors: readonly ProblemFieldError[] = [],
    /** Response headers, e.g. `WWW-Authenticate` on a 401 (RFC 9110 section 11.6.1). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(detail);
    this.status = PROBLEM_TYPES[type].status;
  }
}

/** The body of a problem response (RFC 9457 section 3). */
export function problemBody(problem: AdminProblem): Record<string, unknown> {
  return {
    type: problemTypeUri(problem.type),
    title: PROBLEM_TYPES[problem.type].title,
    status: problem.status,
    detail: problem.detail,
    ...(problem.errors.length === 0 ? {} : { errors: problem.errors }),
  };
}

export function sendProblem(reply: FastifyReply, problem: AdminProblem): FastifyReply {
  for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value);
  return reply.code(problem.status).type('application/problem+json').send(problemBody(problem));
}

/**
 * The one answer for a tenant the caller may not see and for one that does
 * not exist: the same bytes either way, so a tenant admin cannot probe for
 * other tenants.
 */
export const tenantNotFound = (): AdminProblem =>
  new AdminProblem('not-found', 'No such tenant, or not one you administer');

/** A JSON Pointer (RFC 6901) from a path of keys and indexes (the one encoder, shared with the tenant model). */
export { jsonPointer } from '@mcpgw/core';

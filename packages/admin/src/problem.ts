import type { AdminProblemType, ProblemTypeOf } from './problem-registry.js';
import { adminProblemRegistry, problemTypeUri } from './problem-registry.js';

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

/** A problem type the admin API's routes answer with (the registry's `api` surface). */
export type ProblemType = ProblemTypeOf<'api'>;

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
    this.status = adminProblemRegistry[type].status;
  }
}

/**
 * The one body of every problem the admin surface answers (RFC 9457
 * section 3): type, title and status from the registry, the occurrence's
 * detail, and its offending inputs when there are any.
 */
export function problemDocument(
  type: AdminProblemType,
  detail: string,
  errors: readonly ProblemFieldError[] = [],
): { type: string; title: string; status: number; detail: string; errors?: readonly ProblemFieldError[] } {
  const { status, title } = adminProblemRegistry[type];
  return { type: problemTypeUri(type), title, status, detail, ...(errors.length === 0 ? {} : { errors }) };
}

/** The body of a problem response (RFC 9457 section 3). */
export function problemBody(problem: AdminProblem): Record<string, unknown> {
  return problemDocument(problem.type, problem.detail, problem.errors);
}

/**
 * The one answer for a tenant the caller may not see and for one that does
 * not exist: the same bytes either way, so a tenant admin cannot probe for
 * other tenants.
 */
export const tenantNotFound = (): AdminProblem =>
  new AdminProblem('not-found', 'No such tenant, or not one you administer');

/** Load shedding on an admin route (its hook set Retry-After already, RFC 9110 section 10.2.3). */
export const overloaded = (): AdminProblem => new AdminProblem('unavailable', 'The gateway is overloaded; retry later');

/** An unexpected failure: the cause goes to the log only, the detail reveals nothing. */
export const serverFault = (): AdminProblem =>
  new AdminProblem('server-fault', 'The request failed on the server; it was logged');

/** A JSON Pointer (RFC 6901) from a path of keys and indexes (the one encoder, shared with the tenant model). */
export { jsonPointer } from '@mcpgw/core';

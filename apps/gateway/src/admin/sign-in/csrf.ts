import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { AdminSession } from '@mcpgw/admin';
import { SignInProblem } from './sign-in-problem.js';

/** RFC 9110 section 9.2.1: every method but these may change state. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

/** The header a state-changing request carries the session's CSRF token in. */
export const CSRF_HEADER = 'x-csrf-token';

export function isStateChanging(method: string): boolean {
  return !SAFE_METHODS.has(method.toUpperCase());
}

/**
 * Why a state-changing request authenticated by `session` is refused, or
 * undefined when it may proceed. Two checks, both required:
 * - a synchronizer token: the `x-csrf-token` header equals the secret sealed
 *   in the session, which a page reads from `GET .../session` (same-origin
 *   only: another site's page can neither read that response nor the
 *   HttpOnly cookie, so it cannot supply the token);
 * - the request's origin is the gateway's own: `Origin` (RFC 6454 section 7,
 *   sent by browsers on every state-changing request, Fetch "origin header")
 *   equals the base URL the request addressed, and `Sec-Fetch-Site`, when the
 *   browser sends it (W3C Fetch Metadata Request Headers section 2.1), is
 *   `same-origin`.
 */
export function csrfRefusal(
  request: FastifyRequest,
  session: Pick<AdminSession, 'csrfToken'>,
  ownOrigin: string,
  // A console form carries the token in a hidden field instead (console/console-form.ts).
  carried: { token: unknown; where: string } = {
    token: request.headers[CSRF_HEADER],
    where: `${CSRF_HEADER} (read it from GET .../session)`,
  },
): SignInProblem | undefined {
  const origin = request.headers.origin;
  if (origin === undefined || origin !== ownOrigin) {
    return new SignInProblem(
      'csrf-refused',
      origin === undefined
        ? 'A state-changing request signed in by cookie must carry the Origin header (browsers send it).'
        : `A state-changing request signed in by cookie must come from ${ownOrigin}, not ${origin}.`,
    );
  }
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') {
    return new SignInProblem(
      'csrf-refused',
      `Sec-Fetch-Site is ${String(site)}: only same-origin requests may change state.`,
    );
  }
  const { token } = carried;
  if (typeof token !== 'string' || !sameSecret(token, session.csrfToken)) {
    return new SignInProblem(
      'csrf-refused',
      `A state-changing request signed in by cookie must carry the session's CSRF token in ${carried.where}.`,
    );
  }
  return undefined;
}

/** Constant-time comparison, so response timing does not reveal how much of a guess was right. */
function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

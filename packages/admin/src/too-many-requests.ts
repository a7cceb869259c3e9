import { AdminProblem } from './problem.js';

/** A rate limit's refusal: by client address (`ip`) or by another key (the caller). */
export interface LimitRefusal {
  readonly scope: string;
  /** Whole seconds until the window resets (Retry-After, RFC 9110 section 10.2.3). */
  readonly retryAfterSeconds: number;
}

/** An admin request over a rate limit: 429 with Retry-After (RFC 6585 section 4, RFC 9110 section 10.2.3). */
export function tooManyRequests(refusal: LimitRefusal): AdminProblem {
  const who = refusal.scope === 'ip' ? 'from this client address' : 'by this caller';
  return new AdminProblem(
    'too-many-requests',
    `Too many admin API requests ${who}: retry after ${refusal.retryAfterSeconds} s`,
    [],
    { 'retry-after': String(refusal.retryAfterSeconds) },
  );
}

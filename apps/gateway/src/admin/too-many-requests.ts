import type { RateLimitRefusal } from '../plugins/rate-limit.js';
import { AdminProblem } from './problem.js';

/** An admin request over a rate limit: 429 with Retry-After (RFC 6585 section 4, RFC 9110 section 10.2.3). */
export function tooManyRequests(refusal: RateLimitRefusal): AdminProblem {
  const who = refusal.scope === 'ip' ? 'from this client address' : 'by this caller';
  return new AdminProblem(
    'too-many-requests',
    `Too many admin API requests ${who}: retry after ${refusal.retryAfterSeconds} s`,
    [],
    { 'retry-after': String(refusal.retryAfterSeconds) },
  );
}

import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The time one S3 operation has left, shared by its attempts: set by
 * `S3Access.call` around the operation, read by the retry strategy before
 * each retry. The SDK gives a retry strategy no per-operation context, so it
 * rides the operation's async context.
 */
export interface OperationBudget {
  /** When the operation's deadline fires, on `performance.now()`'s clock. */
  readonly deadlineAt: number;
  /** Set when a retry was not attempted because it would not fit; the error the last attempt met. */
  refusedRetry?: RetryErrorType;
}

const budgets = new AsyncLocalStorage<OperationBudget>();

/** Runs `work` (one operation's SDK calls) under `budget`. */
export function withinBudget<T>(budget: OperationBudget, work: () => Promise<T>): Promise<T> {
  return budgets.run(budget, work);
}

/** The SDK's classes of a failed attempt (`@smithy/types` RetryErrorType). */
export type RetryErrorType = 'TRANSIENT' | 'THROTTLING' | 'SERVER_ERROR' | 'CLIENT_ERROR';

interface RetryToken {
  getRetryCount(): number;
  getRetryDelay(): number;
}

/** The SDK's RetryStrategyV2, as much of it as is used here. */
export interface BudgetedRetryStrategy {
  acquireInitialRetryToken(scope: string): Promise<RetryToken>;
  refreshRetryTokenForRetry(
    token: RetryToken,
    errorInfo: { errorType: RetryErrorType; retryAfterHint?: Date },
  ): Promise<RetryToken>;
  recordSuccess(token: RetryToken): void;
}

/** The SDK's standard backoff bases: 50 ms after a transient or 5xx error, 1 s after throttling. */
const BASE_DELAY_MS = 50;
const THROTTLING_BASE_DELAY_MS = 1000;
/** The SDK's cap on one backoff. */
const MAX_DELAY_MS = 20_000;
/** The least time a retry is worth sending with: a small object's GetObject on a nearby endpoint. */
const MIN_ATTEMPT_MS = 100;

export interface BudgetedRetryOptions {
  /** Attempts per operation, the first included. */
  maxAttempts: number;
  /** An attempt's own timeout: a retry needs MIN_ATTEMPT_MS of budget, or all of this if it is less. */
  requestTimeoutMs: number;
  /** The jitter, in [0, 1); a test fixes it. */
  random?: () => number;
}

/**
 * The SDK's standard retries (the same error classes, exponential backoff
 * with full jitter, a throttling base of 1 s), bounded by the operation's
 * budget: a retry whose backoff plus a minimum attempt time would end past
 * the deadline is not attempted, and the operation fails at once with the
 * last attempt's error instead of sleeping into its deadline. The SDK's
 * standard strategy waits out a throttling backoff of up to a second
 * whatever time is left.
 */
export function createBudgetedRetryStrategy(options: BudgetedRetryOptions): BudgetedRetryStrategy {
  const random = options.random ?? Math.random;
  const minAttemptMs = Math.min(MIN_ATTEMPT_MS, options.requestTimeoutMs);
  const token = (count: number, delay: number): RetryToken => ({
    getRetryCount: () => count,
    getRetryDelay: () => delay,
  });
  return {
    acquireInitialRetryToken: async () => token(0, 0),
    async refreshRetryTokenForRetry(previous, { errorType, retryAfterHint }) {
      const count = previous.getRetryCount();
      // Rejecting ends the retries: the SDK then throws the last attempt's error.
      if (errorType === 'CLIENT_ERROR') throw new Error('not retryable');
      if (count + 1 >= options.maxAttempts) throw new Error('no attempts left');
      const base = errorType === 'THROTTLING' ? THROTTLING_BASE_DELAY_MS : BASE_DELAY_MS;
      let delay = Math.floor(random() * Math.min(base * 2 ** count, MAX_DELAY_MS));
      // Retry-After (RFC 9110 section 10.2.3) lengthens the wait, as in the SDK.
      if (retryAfterHint !== undefined) delay = Math.max(delay, retryAfterHint.getTime() - Date.now());
      const budget = budgets.getStore();
      if (budget !== undefined && performance.now() + delay + minAttemptMs > budget.deadlineAt) {
        budget.refusedRetry = errorType;
        throw new Error('no time left for a retry');
      }
      return token(count + 1, delay);
    },
    recordSuccess: () => undefined,
  };
}

import type { S3Client } from '@aws-sdk/client-s3';

/**
 * The time one S3 operation has left, shared by its attempts: registered by
 * `S3Access.call` under the operation's deadline signal (the `abortSignal`
 * of its SDK calls), read by the retry strategy before each retry. The SDK
 * hands a retry strategy only the failed attempt's error, so the client's
 * middleware (`carryBudget`) attaches the budget to that error. An
 * AsyncLocalStorage carried it before; on Node 22 any AsyncLocalStorage in
 * use turns on promise hooks for every promise of the process.
 */
export interface OperationBudget {
  /** When the operation's deadline fires, on `performance.now()`'s clock. */
  readonly deadlineAt: number;
  /** Set when a retry was not attempted because it would not fit; the error the last attempt met. */
  refusedRetry?: RetryErrorType;
}

/** The budgets of operations in flight, by their deadline signal; dropped with it. */
const budgets = new WeakMap<AbortSignal, OperationBudget>();
/** Where a failed attempt's error carries its operation's budget. */
const BUDGET: unique symbol = Symbol('mcpgw.operationBudget');

/** Gives the SDK calls sent with `abortSignal: deadline` the budget `budget`. */
export function registerBudget(deadline: AbortSignal, budget: OperationBudget): void {
  budgets.set(deadline, budget);
}

/** The `context` key under which the SDK keeps a call's `abortSignal` (`@smithy/types` SMITHY_CONTEXT_KEY). */
const SMITHY_CONTEXT_KEY = '__smithy_context';

type Middleware = Parameters<S3Client['middlewareStack']['addRelativeTo']>[0];

/**
 * Adds to `client` a middleware inside the SDK's retry middleware (so it sees
 * every attempt) that attaches the operation's budget to an attempt's error
 * on its way to the retry strategy.
 */
export function carryBudget(client: S3Client): void {
  type Next = (args: unknown) => Promise<unknown>;
  const middleware = ((next: Next, context: Record<string, unknown>) => async (args: unknown) => {
    try {
      return await next(args);
    } catch (error) {
      const smithy = context[SMITHY_CONTEXT_KEY] as { abortSignal?: unknown } | undefined;
      const budget = smithy?.abortSignal instanceof AbortSignal ? budgets.get(smithy.abortSignal) : undefined;
      if (budget !== undefined && typeof error === 'object' && error !== null) {
        Object.defineProperty(error, BUDGET, { value: budget, configurable: true });
      }
      throw error;
    }
  }) as unknown as Middleware;
  client.middlewareStack.addRelativeTo(middleware, {
    relation: 'after',
    toMiddleware: 'retryMiddleware',
    name: 'mcpgwOperationBudget',
    override: true,
  });
}

/** The budget a failed attempt's error carries (see {@link carryBudget}). */
function budgetOf(error: unknown): OperationBudget | undefined {
  return typeof error === 'object' && error !== null ? (error as { [BUDGET]?: OperationBudget })[BUDGET] : undefined;
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
    errorInfo: { errorType: RetryErrorType; retryAfterHint?: Date; error?: unknown },
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
    async refreshRetryTokenForRetry(previous, { errorType, retryAfterHint, error }) {
      const count = previous.getRetryCount();
      // Rejecting ends the retries: the SDK then throws the last attempt's error.
      if (errorType === 'CLIENT_ERROR') throw new Error('not retryable');
      if (count + 1 >= options.maxAttempts) throw new Error('no attempts left');
      const base = errorType === 'THROTTLING' ? THROTTLING_BASE_DELAY_MS : BASE_DELAY_MS;
      let delay = Math.floor(random() * Math.min(base * 2 ** count, MAX_DELAY_MS));
      // Retry-After (RFC 9110 section 10.2.3) lengthens the wait, as in the SDK.
      if (retryAfterHint !== undefined) delay = Math.max(delay, retryAfterHint.getTime() - Date.now());
      const budget = budgetOf(error);
      if (budget !== undefined && performance.now() + delay + minAttemptMs > budget.deadlineAt) {
        budget.refusedRetry = errorType;
        throw new Error('no time left for a retry');
      }
      return token(count + 1, delay);
    },
    recordSuccess: () => undefined,
  };
}

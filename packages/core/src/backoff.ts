export interface BackoffOptions {
  /** The first delay. Default 250 ms. */
  initialMs?: number;
  /** The longest delay. Default 30 s. */
  maxMs?: number;
  /**
   * Each delay is drawn from [1 - jitter, 1] times the nominal one, so
   * replicas that lost the same backend do not retry in step. Default 0.2.
   */
  jitter?: number;
  /** A source of numbers in [0, 1); tests pass a fixed one. Default `Math.random`. */
  random?: () => number;
}

/**
 * Exponential backoff with jitter for reconnects and retried scans: about
 * 250 ms, doubling per failure, capped at 30 s. `next()` is called after
 * each failure and `reset()` after a success.
 */
export class Backoff {
  readonly #initialMs: number;
  readonly #maxMs: number;
  readonly #jitter: number;
  readonly #random: () => number;
  #failures = 0;

  constructor(options: BackoffOptions = {}) {
    this.#initialMs = options.initialMs ?? 250;
    this.#maxMs = options.maxMs ?? 30_000;
    this.#jitter = options.jitter ?? 0.2;
    this.#random = options.random ?? Math.random;
  }

  /** Failures since the last success. */
  get failures(): number {
    return this.#failures;
  }

  /** Records a failure and returns how long to wait before the next attempt. */
  next(): number {
    // The exponent stops growing once past the cap, so it never overflows.
    const exponent = Math.min(this.#failures, 30);
    this.#failures += 1;
    const nominal = Math.min(this.#maxMs, this.#initialMs * 2 ** exponent);
    return Math.round(nominal * (1 - this.#jitter * this.#random()));
  }

  /** Records a success: the next failure starts from the first delay again. */
  reset(): void {
    this.#failures = 0;
  }
}

import type { Logger } from './logger.js';

/**
 * A warning that repeats while a backend stays down, condensed to one line
 * per doubling of the attempt count (attempts 1, 2, 4, 8, ...), each line
 * carrying `attempt` and `retryInMs`. A backend down for a day at the 30 s
 * backoff cap logs about a dozen lines, not thousands. `recovered()` logs
 * once at info when an outage that was reported ends.
 */
export class CondensedWarning {
  readonly #logger: Logger;
  readonly #message: string;
  #attempts = 0;

  constructor(logger: Logger, message: string) {
    this.#logger = logger;
    this.#message = message;
  }

  /** Failed attempts since the last recovery. */
  get attempts(): number {
    return this.#attempts;
  }

  /** Counts a failed attempt; logs it when the count is a power of two. */
  failed(fields: object, retryInMs?: number): void {
    this.#attempts += 1;
    const attempt = this.#attempts;
    if ((attempt & (attempt - 1)) !== 0) return;
    this.#logger.warn(
      retryInMs === undefined ? { ...fields, attempt } : { ...fields, attempt, retryInMs },
      this.#message,
    );
  }

  /** Ends an outage: logs how many attempts it took, if any failed. */
  recovered(): void {
    if (this.#attempts === 0) return;
    this.#logger.info({ attempts: this.#attempts }, `${this.#message}: recovered`);
    this.#attempts = 0;
  }
}

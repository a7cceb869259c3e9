/**
 * The one way a test waits for a condition: poll it until it holds, bounded by
 * a deadline that only turns a wait that never ends into a failure. A test
 * never passes or fails by how fast the machine is, so the deadline is
 * generous and nothing is measured with it (latency targets live in bench/).
 *
 * The timers are taken when this module loads, so polling keeps real time
 * while a test fakes the clock (vi.useFakeTimers replaces the globals later).
 */
const realSetTimeout = globalThis.setTimeout;
const realNow = performance.now.bind(performance);

/** Time between two checks. */
const INTERVAL_MS = 10;

/**
 * A check: holds when it returns `true`, or returns nothing without throwing
 * (an `expect(...)` that passed); `false` or a thrown error means "not yet".
 */
export type Check = () => boolean | void | Promise<boolean | void>;

/**
 * Polls `check` every 10 ms until it holds; after `limitMs` throws an error
 * naming `what` it was waiting for and the last thing seen (the last error's
 * message, e.g. an `expect` saying which value it got, or that the check was
 * still false). For what only shows from outside, such as a change made on
 * one replica becoming visible on another.
 */
export async function within(limitMs: number, check: Check, what = 'the condition'): Promise<void> {
  const deadline = realNow() + limitMs;
  let last = 'no check finished';
  for (;;) {
    try {
      if ((await check()) !== false) return;
      last = 'the check returned false';
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    if (realNow() >= deadline) throw new Error(`${what}: not within ${limitMs} ms; last seen: ${last}`);
    await new Promise((resolve) => realSetTimeout(resolve, INTERVAL_MS));
  }
}

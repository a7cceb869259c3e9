/**
 * Polls `check` every 10 ms until it holds and returns how many milliseconds
 * that took; throws after `limitMs`. For what only shows from outside, such
 * as a change made on one replica becoming visible on another.
 */
export async function within(limitMs: number, check: () => Promise<boolean>): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < limitMs) {
    if (await check()) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`not within ${limitMs} ms`);
}

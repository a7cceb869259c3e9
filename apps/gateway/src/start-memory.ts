import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Long enough after listening for the start's follow-up work (the first sync, issuer key fetches) to be done. */
const AFTER_LISTENING_MS = 3000;

/**
 * Gives back the memory the start needed: one full, memory-reducing garbage
 * collection a few seconds after the gateway listens. Loading the import
 * graph and building the configuration's schemas grow V8's young generation
 * (22 MB of pages for 6 MB of objects measured at 10 s) and leave garbage in
 * the old one; V8 keeps both until its memory reducer runs, which an idle
 * process reached later than its first readings. Measured with
 * `bench/start-idle.ts` (docs/performance.md, "Idle memory").
 *
 * V8 offers no collection from JavaScript without `--expose-gc`; setting the
 * flag at run time and reading `gc` from a new context is the documented
 * way to reach it without changing how the process is started (the flag
 * only exposes the function; it changes no collector behaviour). The
 * collection pauses the process once: 60 to 80 ms measured on Node 26 with
 * the control plane on Postgres, freeing about 30 MB (120 → 95 MB resident at
 * 10 s). Node 20's V8 does not know the `last-resort` flavour; there the call
 * is an ordinary full collection of about 5 ms that frees nothing measurable.
 */
export function releaseStartMemory(onDone: (figures: { ms: number; freedBytes: number }) => void): void {
  const timer = setTimeout(() => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as (options?: object) => void;
    const before = process.memoryUsage().rss;
    const started = performance.now();
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    onDone({ ms: Math.round(performance.now() - started), freedBytes: before - process.memoryUsage().rss });
  }, AFTER_LISTENING_MS);
  timer.unref();
}

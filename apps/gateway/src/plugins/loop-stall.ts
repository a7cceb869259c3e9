/**
 * How late the event loop is right now, for load shedding that reacts within
 * one loop turn rather than one sampling period.
 *
 * A timer stamps the time on every turn of the loop (timers run before the
 * poll phase that reads requests). A request read late in a long poll phase
 * has waited that long already, and one read at the start of a turn waited
 * through the previous turn: the stall is the larger of the time since the
 * stamp and the previous turn's overrun. A mean sampled every second (what
 * @fastify/under-pressure measures) lets a wave of requests in for up to a
 * second before it turns, and then refuses everything for a second.
 *
 * What it cannot do: past a few hundred connections that retry at once, the
 * refusals alone can make every turn overrun, and then every request is
 * refused (no goodput) until the load eases. That is why it is off unless
 * configured (docs/operations.md, "Limits and overload").
 */
export interface LoopStall {
  /** Milliseconds the loop is behind its timer now (0 when on time). */
  now(): number;
  stop(): void;
}

/** The timer's period: short enough to stamp every turn, long enough to cost nothing measurable. */
const PERIOD_MS = 10;

export function startLoopStall(): LoopStall {
  let stamp = performance.now();
  let overrun = 0;
  const timer = setInterval(() => {
    const at = performance.now();
    overrun = Math.max(0, at - stamp - PERIOD_MS);
    stamp = at;
  }, PERIOD_MS);
  timer.unref();
  return {
    now: () => Math.max(overrun, performance.now() - stamp - PERIOD_MS, 0),
    stop: () => clearInterval(timer),
  };
}

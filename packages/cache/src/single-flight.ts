/**
 * Collapses concurrent identical work inside one replica: while a call for
 * `key` runs, later callers share its promise. The shared work gets its own
 * AbortSignal, aborted only when every caller waiting on it has gone away,
 * so one impatient client cannot fail the others.
 */
export class SingleFlight {
  private readonly flights = new Map<
    string,
    { promise: Promise<unknown>; controller: AbortController; waiters: number }
  >();

  run<T>(key: string, signal: AbortSignal | undefined, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    let flight = this.flights.get(key);
    if (flight === undefined) {
      const controller = new AbortController();
      const promise = work(controller.signal).finally(() => this.flights.delete(key));
      flight = { promise, controller, waiters: 0 };
      this.flights.set(key, flight);
    }
    const joined = flight;
    joined.waiters += 1;
    signal?.addEventListener(
      'abort',
      () => {
        joined.waiters -= 1;
        if (joined.waiters === 0) joined.controller.abort(signal.reason);
      },
      { once: true },
    );
    return joined.promise as Promise<T>;
  }
}

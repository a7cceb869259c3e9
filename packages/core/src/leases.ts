/** What a holder is told: it holds the lease now, or no longer. */
export interface LeaseHandlers {
  /** This replica holds the lease: it runs the work the lease guards. `takeover`: another replica held it before. */
  acquired(takeover: boolean): void;
  /** Another replica holds it now: stop the work. */
  lost(): void;
}

/**
 * Leases on named pieces of work that should run on one replica of the
 * deployment at a time (a source's change detection, the relay of the
 * control plane's change signal; docs/adr/0010-one-replica-bus.md).
 */
export interface Leases {
  /**
   * Contends for `name` until the returned release is called: `acquired`
   * while this replica holds it, `lost` when another takes it. Releasing a
   * held lease frees it for the others at once.
   */
  hold(name: string, handlers: LeaseHandlers): () => void;
}

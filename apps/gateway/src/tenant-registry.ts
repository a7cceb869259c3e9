/**
 * The tenants this replica serves, each as a runtime that can be replaced
 * while requests are in flight. A change to a tenant builds a new runtime
 * beside the old one and swaps it in one step: new requests get the new
 * runtime, requests already holding the old one finish on it, and the old
 * one closes (its sources with it) once the last of them is done. A runtime
 * that fails to build never replaces a good one; the failure is kept on the
 * tenant's status for operators and the admin API.
 */
export interface ClosableRuntime {
  close(): Promise<void>;
}

/** A runtime held for the length of one request; `release()` exactly once. */
export interface RuntimeLease<R> {
  readonly runtime: R;
  release(): void;
}

export interface TenantStatus {
  /** The revision the serving runtime was built from; absent while none serves. */
  readonly servingRevision?: number;
  /** When the serving runtime was swapped in (ISO 8601). */
  readonly lastChangeAt?: string;
  /** Why the most recent build failed, if it did after the last success. */
  readonly lastError?: { readonly message: string; readonly revision?: number; readonly at: string };
}

export type ApplyOutcome = { readonly ok: true } | { readonly ok: false; readonly error: Error };

interface Held<R> {
  readonly runtime: R;
  inFlight: number;
  retired: boolean;
  closing: boolean;
}

export interface TenantRegistry<R extends ClosableRuntime> {
  /** The serving runtimes, for lookups that do not hold one across awaits (health, metadata). */
  readonly serving: ReadonlyMap<string, R>;
  /** Holds the serving runtime of `tenantId` until released; undefined for an unknown tenant. */
  acquire(tenantId: string): RuntimeLease<R> | undefined;
  /**
   * Builds a runtime for `tenantId` and swaps it in. Builds of one tenant
   * run one after another, in call order; a failed build leaves the previous
   * runtime serving and is reported on the status, never thrown.
   */
  apply(tenantId: string, build: () => Promise<R>, revision?: number): Promise<ApplyOutcome>;
  /** Stops serving `tenantId`; its runtime closes when its requests are done. */
  remove(tenantId: string): Promise<void>;
  status(tenantId: string): TenantStatus | undefined;
  /** Retires every runtime and resolves once all are closed, after the requests holding them are done. */
  close(): Promise<void>;
}

export function createTenantRegistry<R extends ClosableRuntime>(
  onCloseError: (tenantId: string, error: unknown) => void = () => undefined,
): TenantRegistry<R> {
  const serving = new Map<string, R>();
  const held = new Map<string, Held<R>>();
  const statuses = new Map<string, TenantStatus>();
  const queues = new Map<string, Promise<unknown>>();
  /** Retired runtimes not closed yet, each with what resolves once it is. */
  const draining = new Map<Held<R>, { promise: Promise<void>; resolve: () => void }>();

  function closeWhenIdle(tenantId: string, entry: Held<R>): void {
    if (!entry.retired || entry.inFlight > 0 || entry.closing) return;
    entry.closing = true;
    const done = draining.get(entry);
    void entry.runtime
      .close()
      .catch((error: unknown) => onCloseError(tenantId, error))
      .finally(() => {
        draining.delete(entry);
        done?.resolve();
      });
  }

  function retire(tenantId: string): void {
    const entry = held.get(tenantId);
    if (entry === undefined) return;
    held.delete(tenantId);
    serving.delete(tenantId);
    entry.retired = true;
    let resolve = (): void => undefined;
    const promise = new Promise<void>((settle) => (resolve = settle));
    draining.set(entry, { promise, resolve });
    closeWhenIdle(tenantId, entry);
  }

  /** Runs `work` after every earlier change of the same tenant. */
  function serialise<T>(tenantId: string, work: () => Promise<T>): Promise<T> {
    const previous = queues.get(tenantId) ?? Promise.resolve();
    const next = previous.then(work, work);
    queues.set(tenantId, next);
    void next.finally(() => {
      if (queues.get(tenantId) === next) queues.delete(tenantId);
    });
    return next;
  }

  return {
    serving,

    acquire(tenantId) {
      const entry = held.get(tenantId);
      if (entry === undefined) return undefined;
      entry.inFlight += 1;
      let released = false;
      return {
        runtime: entry.runtime,
        release() {
          if (released) return;
          released = true;
          entry.inFlight -= 1;
          closeWhenIdle(tenantId, entry);
        },
      };
    },

    apply(tenantId, build, revision) {
      return serialise(tenantId, async (): Promise<ApplyOutcome> => {
        let runtime: R;
        try {
          runtime = await build();
        } catch (cause) {
          const error = cause instanceof Error ? cause : new Error(String(cause));
          const previous = statuses.get(tenantId) ?? {};
          statuses.set(tenantId, {
            ...previous,
            lastError: {
              message: error.message,
              ...(revision === undefined ? {} : { revision }),
              at: new Date().toISOString(),
            },
          });
          return { ok: false, error };
        }
        retire(tenantId);
        held.set(tenantId, { runtime, inFlight: 0, retired: false, closing: false });
        serving.set(tenantId, runtime);
        statuses.set(tenantId, {
          ...(revision === undefined ? {} : { servingRevision: revision }),
          lastChangeAt: new Date().toISOString(),
        });
        return { ok: true };
      });
    },

    remove(tenantId) {
      return serialise(tenantId, async () => {
        retire(tenantId);
        statuses.delete(tenantId);
      });
    },

    status(tenantId) {
      return statuses.get(tenantId);
    },

    async close() {
      await Promise.allSettled([...queues.values()]);
      for (const tenantId of [...held.keys()]) retire(tenantId);
      // Requests still holding a runtime finish first (the server drains them on shutdown).
      await Promise.all([...draining.values()].map((entry) => entry.promise));
    },
  };
}

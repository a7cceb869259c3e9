/** What the registry needs of a runtime: closing it once its last request is done. */
export interface ClosableRuntime {
  close(): Promise<void>;
}

/** A runtime held for the length of one request; `release()` exactly once. */
export interface RuntimeLease<R> {
  readonly runtime: R;
  release(): void;
}

export interface TenantStatus {
  /** The newest revision this replica has started to apply. */
  readonly revision?: number;
  /** The newest revision this replica has finished applying: serving it, or not serving the tenant because it could not be built. */
  readonly appliedRevision?: number;
  /** The revision the serving runtime was built from; absent while none serves. */
  readonly servingRevision?: number;
  /** When the serving runtime was swapped in, or retired by a failed build (ISO 8601). */
  readonly lastChangeAt?: string;
  /** Why the applied revision could not be built (the tenant is then not served). */
  readonly lastError?: { readonly message: string; readonly revision?: number; readonly at: string };
}

/** `skipped`: the revision was already applied (or a newer one was): nothing changed. */
export type ApplyOutcome =
  { readonly ok: true; readonly skipped?: true } | { readonly ok: false; readonly error: Error };

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
   * run one after another, in call order; a revision already applied, or
   * older than one applied, is skipped. A failed build retires the previous runtime (the
   * tenant is no longer served) and is reported on the status, never thrown.
   */
  apply(tenantId: string, build: () => Promise<R>, revision?: number): Promise<ApplyOutcome>;
  /**
   * Resolves once every change of the tenant started so far is applied, or
   * undefined when none is pending: a request arriving while a newer revision
   * is being built waits for it rather than be served by the older one.
   */
  whenCurrent(tenantId: string): Promise<void> | undefined;
  /** Resolves once every retired runtime of the tenant has closed (its last request done). */
  retiredClosed(tenantId: string): Promise<void>;
  /**
   * Resolves true once this replica has applied `revision` of the tenant (or
   * a newer one), false after `timeoutMs`: an admin write answers with what
   * its own replica serves.
   */
  whenApplied(tenantId: string, revision: number, timeoutMs: number): Promise<boolean>;
  /** Stops serving `tenantId`; its runtime closes when its requests are done. */
  remove(tenantId: string): Promise<void>;
  status(tenantId: string): TenantStatus | undefined;
  /**
   * Calls `listener` after the tenant's serving runtime changed: swapped in,
   * retired by a failed build, or removed. What lives beside a runtime (the
   * tenant's hosted authorization server) follows it. Returns the unsubscribe.
   */
  onServingChange(listener: (tenantId: string) => void): () => void;
  /** Retires every runtime and resolves once all are closed, after the requests holding them are done. */
  close(): Promise<void>;
}

/**
 * The tenants this replica serves, each as a runtime that can be replaced
 * while requests are in flight. A change to a tenant builds a new runtime
 * beside the old one and swaps it in one step: new requests get the new
 * runtime, requests already holding the old one finish on it, and the old
 * one closes (its sources with it) once the last of them is done.
 *
 * A revision that cannot be built at all stops the tenant being served (404,
 * as if suspended) instead of leaving the previous runtime in place: the
 * previous runtime holds the previous grants and issuers, and serving them
 * after a committed change would keep a revoked grant alive (fail open).
 * Backends that fail to open do not fail a build (see createTenantRuntime).
 * The failure is kept on the tenant's status for operators and the admin API.
 */
export function createTenantRegistry<R extends ClosableRuntime>(
  onCloseError: (tenantId: string, error: unknown) => void = () => undefined,
): TenantRegistry<R> {
  const serving = new Map<string, R>();
  const held = new Map<string, Held<R>>();
  const statuses = new Map<string, TenantStatus>();
  const queues = new Map<string, Promise<unknown>>();
  /** Waiting `whenApplied` calls, told after every change of a status. */
  const waiters = new Set<() => void>();
  const setStatus = (tenantId: string, status: TenantStatus): void => {
    statuses.set(tenantId, status);
    for (const waiter of [...waiters]) waiter();
  };
  const servingListeners = new Set<(tenantId: string) => void>();
  const servingChanged = (tenantId: string): void => {
    for (const listener of [...servingListeners]) listener(tenantId);
  };
  /** Retired runtimes not closed yet, each with its tenant and what resolves once it is. */
  const draining = new Map<Held<R>, { tenantId: string; promise: Promise<void>; resolve: () => void }>();

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
    servingChanged(tenantId);
    entry.retired = true;
    let resolve = (): void => undefined;
    const promise = new Promise<void>((settle) => (resolve = settle));
    draining.set(entry, { tenantId, promise, resolve });
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
      if (revision !== undefined) {
        const previous = statuses.get(tenantId) ?? {};
        if (!((previous.revision ?? Number.NEGATIVE_INFINITY) >= revision)) {
          statuses.set(tenantId, { ...previous, revision });
        }
      }
      return serialise(tenantId, async (): Promise<ApplyOutcome> => {
        const applied = statuses.get(tenantId)?.appliedRevision;
        // Applied already (two signals for one change), or loaded before a newer one but queued after it.
        if (revision !== undefined && applied !== undefined && revision <= applied) return { ok: true, skipped: true };
        let runtime: R;
        try {
          runtime = await build();
        } catch (cause) {
          const error = cause instanceof Error ? cause : new Error(String(cause));
          const at = new Date().toISOString();
          // Not the previous runtime: it holds the grants and issuers this revision changed.
          retire(tenantId);
          const seen = statuses.get(tenantId)?.revision;
          setStatus(tenantId, {
            ...(seen === undefined ? {} : { revision: seen }),
            ...(revision === undefined ? {} : { appliedRevision: revision }),
            lastChangeAt: at,
            lastError: { message: error.message, ...(revision === undefined ? {} : { revision }), at },
          });
          return { ok: false, error };
        }
        retire(tenantId);
        held.set(tenantId, { runtime, inFlight: 0, retired: false, closing: false });
        serving.set(tenantId, runtime);
        servingChanged(tenantId);
        const before = statuses.get(tenantId);
        const seen = before?.revision;
        // A build without a revision rebuilds what serves (new signing keys): it serves the same revision.
        const appliedRevision = revision ?? before?.appliedRevision;
        const servingRevision = revision ?? before?.servingRevision;
        setStatus(tenantId, {
          ...(seen === undefined ? {} : { revision: seen }),
          ...(appliedRevision === undefined ? {} : { appliedRevision }),
          ...(servingRevision === undefined ? {} : { servingRevision }),
          lastChangeAt: new Date().toISOString(),
        });
        return { ok: true };
      });
    },

    whenCurrent(tenantId) {
      const status = statuses.get(tenantId);
      if (status?.revision === undefined) return undefined;
      if ((status.appliedRevision ?? Number.NEGATIVE_INFINITY) >= status.revision) return undefined;
      const queued = queues.get(tenantId);
      return queued === undefined
        ? undefined
        : queued.then(
            () => undefined,
            () => undefined,
          );
    },

    whenApplied(tenantId, revision, timeoutMs) {
      const applied = () => (statuses.get(tenantId)?.appliedRevision ?? Number.NEGATIVE_INFINITY) >= revision;
      if (applied()) return Promise.resolve(true);
      return new Promise<boolean>((resolve) => {
        const done = (outcome: boolean) => {
          clearTimeout(timer);
          waiters.delete(check);
          resolve(outcome);
        };
        const check = () => {
          if (applied()) done(true);
        };
        const timer = setTimeout(() => done(false), timeoutMs);
        timer.unref();
        waiters.add(check);
      });
    },

    async retiredClosed(tenantId) {
      await Promise.all([...draining.values()].filter((entry) => entry.tenantId === tenantId).map((e) => e.promise));
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

    onServingChange(listener) {
      servingListeners.add(listener);
      return () => servingListeners.delete(listener);
    },

    async close() {
      await Promise.allSettled([...queues.values()]);
      for (const tenantId of [...held.keys()]) retire(tenantId);
      // Requests still holding a runtime finish first (the server drains them on shutdown).
      await Promise.all([...draining.values()].map((entry) => entry.promise));
    },
  };
}

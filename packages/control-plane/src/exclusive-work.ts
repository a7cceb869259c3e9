import type { SqlDatabase } from './sql-database.js';

/**
 * Key of the transaction-scoped advisory lock that serialises exclusive work
 * across replicas (an arbitrary constant, "mcpgw-ex"; the migrations hold
 * their own).
 */
const EXCLUSIVE_LOCK_KEY = 0x6d637865;

/** Runs work that no other run, on this replica or another of the same control plane, may overlap. */
export type ExclusiveRunner = <T>(work: () => Promise<T>) => Promise<T>;

/**
 * One run at a time: queued in this process, and on Postgres behind an
 * advisory lock held by a transaction of its own for as long as `work` runs
 * (its writes commit on other connections of the pool, each in its own
 * transaction, so they are visible to the next run as soon as the lock is
 * free). PGlite needs no lock: one process owns its folder, and its single
 * connection could not hold one while `work` queries beside it.
 */
export function createExclusiveRunner(db: SqlDatabase): ExclusiveRunner {
  let queue: Promise<unknown> = Promise.resolve();
  const locked = <T>(work: () => Promise<T>): Promise<T> =>
    db.engine === 'pglite'
      ? work()
      : db.transaction(async (tx) => {
          await tx.query('SELECT pg_advisory_xact_lock($1)', [EXCLUSIVE_LOCK_KEY]);
          return work();
        });
  return (work) => {
    const run = queue.then(() => locked(work));
    queue = run.catch(() => undefined);
    return run;
  };
}

import type { ControlPlaneStore, SqlDatabase } from '@mcpgw/control-plane';
import type { Logger } from '@mcpgw/core';
import { errorSummary } from '@mcpgw/core';
import { systemClock, type Clock } from './records.js';
import { deleteExpiredRecords } from './sql-record-store.js';

export interface ExpiredRecordSweepOptions {
  readonly db: SqlDatabase;
  /** The control plane's exclusive work (`ControlPlaneStore.exclusively`): replicas sweep one at a time. */
  readonly exclusively: ControlPlaneStore['exclusively'];
  readonly now?: Clock;
  /** How often; default every 10 minutes. */
  readonly intervalMs?: number;
  readonly logger: Logger;
}

export interface ExpiredRecordSweep {
  /** One sweep now; resolves to how many records it deleted. */
  sweepOnce(): Promise<number>;
  stop(): void;
}

/**
 * Deletes the SQL records that have expired (Redis expires its own by TTL).
 * Nothing reads an expired row (every lookup filters on `expires_at`), so
 * the sweep only reclaims space, and may run late or twice without harm.
 */
export function startExpiredRecordSweep(options: ExpiredRecordSweepOptions): ExpiredRecordSweep {
  const now = options.now ?? systemClock;
  const sweepOnce = () => options.exclusively(() => deleteExpiredRecords(options.db, now()));
  let running = false;
  const timer = setInterval(
    () => {
      if (running) return;
      running = true;
      sweepOnce()
        .then((deleted) => {
          if (deleted > 0) options.logger.debug({ deleted }, 'authorization server: expired records deleted');
        })
        .catch((error: unknown) => {
          options.logger.warn({ error: errorSummary(error) }, 'authorization server: the expired-record sweep failed');
        })
        .finally(() => {
          running = false;
        });
    },
    options.intervalMs ?? 10 * 60_000,
  );
  timer.unref();
  return { sweepOnce, stop: () => clearInterval(timer) };
}

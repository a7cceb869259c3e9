import type { SqlDatabase } from '@mcpgw/control-plane';
import { CONTROL_PLANE_CHANNEL } from '@mcpgw/control-plane';
import type { Logger, ReplicaBus } from '@mcpgw/core';
import { errorSummary } from '@mcpgw/core';
import { EVERY_TENANT } from './revisions-topic.js';

export interface ControlPlaneRelayOptions {
  /** The control plane: its NOTIFY at commit names the tenant a write changed. */
  readonly db: SqlDatabase;
  readonly bus: ReplicaBus;
  /** The revisions topic (revisionsTopic). */
  readonly topic: string;
  /** How often a relay that could not publish tries again. Default 1,000 ms. */
  readonly retryMs?: number;
  readonly logger: Logger;
}

/**
 * Carries the control plane's own announcement (the NOTIFY every write sends
 * at commit, whoever wrote: this app, another replica, a start applying a
 * bootstrap file) onto a bus whose transport is not that database (Redis, or
 * in process beside the embedded store), so the control-plane sync hears
 * every revision on the bus alone (docs/adr/0012-one-bus-two-transports.md).
 * Every replica relays: each change arrives once per replica, and the sync
 * reads a tenant once however many copies arrive. When the listening
 * connection comes back after a gap, or a publish failed, the relay asks
 * every replica to compare every tenant once (EVERY_TENANT), tried again
 * until it goes out. Resolves once it listens.
 */
export async function startControlPlaneRelay(options: ControlPlaneRelayOptions): Promise<() => Promise<void>> {
  const { bus, topic, logger } = options;
  let owed = false;
  let stopped = false;
  const send = (message: string) => {
    if (stopped) return;
    bus.publish(topic, message).then(
      () => {
        if (owed) payOwed();
      },
      (error: unknown) => {
        if (!owed)
          logger.warn(
            { err: errorSummary(error) },
            'relaying a control-plane change failed; every replica resyncs once it goes out',
          );
        owed = true;
      },
    );
  };
  function payOwed(): void {
    owed = false;
    send(EVERY_TENANT);
  }
  const retry = setInterval(() => {
    if (owed) payOwed();
  }, options.retryMs ?? 1000);
  retry.unref();
  const stopListening = await options.db.listen(CONTROL_PLANE_CHANNEL, {
    onNotify: (tenantId) => send(tenantId),
    onResubscribed: () => send(EVERY_TENANT),
    onLost: (error) => logger.warn({ err: errorSummary(error) }, 'control-plane change signal lost; reconnecting'),
  });
  return async () => {
    stopped = true;
    clearInterval(retry);
    await stopListening();
  };
}

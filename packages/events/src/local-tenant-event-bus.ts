import type { Logger } from '@mcpgw/core';
import { createInProcessReplicaBus } from '@mcpgw/core';
import { createLocalLeases } from './leases.js';
import type { ReplicaTenantEventBus } from './tenant-event-bus.js';
import { createReplicaTenantEventBus } from './tenant-event-bus.js';

/**
 * The bus of a single replica (no Redis, no Postgres control plane): events
 * reach this process's listeners only, synchronously, in publication order,
 * and every change-detection lease is held here.
 */
export function createLocalTenantEventBus(logger: Logger): ReplicaTenantEventBus {
  const bus = createInProcessReplicaBus();
  const events = createReplicaTenantEventBus({ bus, leases: createLocalLeases(), logger });
  return {
    ...events,
    async close() {
      await events.close();
      await bus.close();
    },
  };
}

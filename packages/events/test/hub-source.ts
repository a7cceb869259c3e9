import type { Source } from '@mcpgw/core';
import { ChangeHub, DEFAULT_SOURCE_TTL_MS, silentLogger } from '@mcpgw/core';

/**
 * A minimal source around the real ChangeHub every source uses, so a test can
 * tell whether anyone watches it (`hub.active`) and make a change happen.
 */
export function hubSource(id: string): Source & { hub: ChangeHub } {
  const hub = new ChangeHub({ sourceId: id, logger: silentLogger });
  return {
    id,
    kind: 'test',
    ttlMs: DEFAULT_SOURCE_TTL_MS,
    hub,
    listResources: async () => ({ items: [] }),
    listTemplates: async () => [],
    owns: () => false,
    read: async () => undefined,
    watch: (listener) => hub.watch(listener),
    health: async () => ({ ok: true }),
    close: async () => hub.close(),
  };
}

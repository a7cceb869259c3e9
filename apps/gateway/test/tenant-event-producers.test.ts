import { describe, expect, it } from 'vitest';
import type { Source } from '@mcpgw/core';
import { ChangeHub, DEFAULT_SOURCE_TTL_MS, silentLogger } from '@mcpgw/core';
import { collectEvents } from '@mcpgw/test-helpers/tenant-event-collector';
import { createLocalTenantEventBus } from '../src/notifications/local-tenant-event-bus.js';
import { createTenantEventProducers } from '../src/notifications/tenant-event-producers.js';
import type { TenantEvent } from '../src/notifications/tenant-events.js';

// The producers on the in-process bus (one replica). The sources are minimal
// ones around the real ChangeHub every source uses, so a test can tell
// whether anyone watches (`hub.active`) and make a change happen.

function hubSource(id: string): Source & { hub: ChangeHub } {
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

function setup() {
  const runtimes = new Map<string, { runtime: object; sources: Source[] }>();
  const serve = (tenantId: string, ...sources: Source[]) => runtimes.set(tenantId, { runtime: {}, sources });
  const bus = createLocalTenantEventBus(silentLogger);
  const events = createTenantEventProducers({ bus, sourcesOf: (id) => runtimes.get(id), logger: silentLogger });
  return { runtimes, serve, bus, events };
}

describe('tenant event producers', () => {
  it('watches a tenant’s sources only while someone listens, and publishes what they report', () => {
    const { serve, bus, events } = setup();
    const [docs, plain] = [hubSource('docs'), { ...hubSource('plain'), watch: undefined }];
    serve('acme', docs, plain);
    expect(docs.hub.active).toBe(false);
    const acme = collectEvents<TenantEvent>();
    const viaBus = collectEvents<TenantEvent>();
    bus.subscribe('acme', viaBus.listener);
    const stop = events.subscribe('acme', acme.listener);
    expect(docs.hub.active).toBe(true);
    expect(events.watchedSources('acme')).toEqual(['docs']);

    docs.hub.publish({ sourceId: 'docs', kind: 'updated', uris: ['docs://a'] });
    const expected = {
      type: 'source',
      tenantId: 'acme',
      sourceId: 'docs',
      change: { type: 'resource-updated', uri: 'docs://a' },
    };
    expect(acme.events).toEqual([expected]);
    // Published on the bus, where other replicas hear it too.
    expect(viaBus.events).toEqual([expected]);

    stop();
    expect(docs.hub.active).toBe(false);
    expect(events.watchedSources('acme')).toEqual([]);
  });

  it('after a runtime swap watches the new sources and tells this replica’s listeners, not the bus', () => {
    const { serve, runtimes, bus, events } = setup();
    const before = hubSource('docs');
    serve('acme', before);
    const acme = collectEvents<TenantEvent>();
    const viaBus = collectEvents<TenantEvent>();
    events.subscribe('acme', acme.listener);
    bus.subscribe('acme', viaBus.listener);

    const after = hubSource('docs');
    serve('acme', after);
    events.tenantChanged('acme');
    expect([before.hub.active, after.hub.active]).toEqual([false, true]);
    expect(acme.events).toEqual([{ type: 'configuration', tenantId: 'acme' }]);
    expect(viaBus.events).toEqual([]);

    runtimes.delete('acme');
    events.tenantChanged('acme');
    expect(after.hub.active).toBe(false);
    expect(events.watchedSources('acme')).toEqual([]);
    expect(acme.events).toHaveLength(2);
  });

  it('does nothing for a tenant nobody listens to, and nothing after close', async () => {
    const { serve, events } = setup();
    const docs = hubSource('docs');
    serve('acme', docs);
    events.tenantChanged('acme');
    expect(docs.hub.active).toBe(false);
    const acme = collectEvents<TenantEvent>();
    events.subscribe('acme', acme.listener);
    await events.close();
    expect(docs.hub.active).toBe(false);
    events.tenantChanged('acme');
    expect(events.subscribe('acme', acme.listener)).toBeTypeOf('function');
    expect(acme.events).toEqual([]);
  });
});

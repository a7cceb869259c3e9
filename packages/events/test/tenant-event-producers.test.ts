import { describe, expect, it } from 'vitest';
import type { Source } from '@mcpgw/core';
import { silentLogger } from '@mcpgw/core';
import { collectEvents } from '@mcpgw/test-helpers/tenant-event-collector';
import { createLocalTenantEventBus } from '../src/local-tenant-event-bus.js';
import { createTenantEventProducers } from '../src/tenant-event-producers.js';
import type { TenantEvent } from '../src/tenant-events.js';
import { hubSource } from './hub-source.js';
import { MAX_MESSAGE_CHARS, decodeEnvelope, encodeEnvelope } from '../src/tenant-event-wire.js';

// The producers on the in-process bus (one replica). The sources are minimal
// ones around the real ChangeHub every source uses, so a test can tell
// whether anyone watches (`hub.active`) and make a change happen.

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

  it('names every resource of a large change on the bus, in pieces that each fit one message', () => {
    const { serve, bus, events } = setup();
    const docs = hubSource('docs');
    serve('acme', docs);
    const viaBus = collectEvents<TenantEvent>();
    bus.subscribe('acme', viaBus.listener);
    events.subscribe('acme', () => undefined);
    // 400 resources of 200 characters: far more than one message holds.
    const uris = Array.from({ length: 400 }, (_, i) => `docs://${String(i).padStart(4, '0')}/${'x'.repeat(190)}`);
    docs.hub.publish({ sourceId: 'docs', kind: 'list_changed', uris });
    docs.hub.publish({ sourceId: 'docs', kind: 'updated', uris: ['docs://'], members: new Map([['docs://', uris]]) });

    const listed = viaBus.events.flatMap((e) => (e.type === 'source' && e.change.type === 'list-changed' ? [e] : []));
    const shown = viaBus.events.flatMap((e) =>
      e.type === 'source' && e.change.type === 'resource-updated' ? [e.change] : [],
    );
    expect(listed.length).toBeGreaterThan(1);
    expect(listed.flatMap((e) => (e.change.type === 'list-changed' ? e.change.uris : []))).toEqual(uris);
    expect(shown.length).toBeGreaterThan(1);
    expect(new Set(shown.map((change) => change.uri))).toEqual(new Set(['docs://']));
    expect(shown.flatMap((change) => change.because ?? [])).toEqual(uris);
    // Each piece travels: it encodes within the bound and another replica decodes it as it was sent.
    for (const event of viaBus.events) {
      const message = encodeEnvelope(event);
      expect(message.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
      expect(decodeEnvelope('acme', message)).toEqual({ ok: true, event });
    }
    // A list change that names nothing cannot be decided per caller: another replica drops it.
    const unnamed = { type: 'source', tenantId: 'acme', sourceId: 'docs', change: { type: 'list-changed' } };
    expect(decodeEnvelope('acme', JSON.stringify({ v: 2, event: unnamed }))).toEqual({
      ok: false,
      reason: 'malformed',
    });
  });
});

import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Principal } from '@mcpgw/core';
import { silentLogger } from '@mcpgw/core';
import { compileGrants, resolveAccess } from '@mcpgw/policy';
import { createStaticSource } from '@mcpgw/source-static';
import { createListenStreams, createLocalTenantEventBus, startCallerSubscription } from '@mcpgw/events';
import { acceptListen } from '../src/routes/listen-stream.js';
import type { TenantRuntime } from '@mcpgw/tenancy';

// A stream's `list_changed` notifications are coalesced: the first of a burst goes at once,
// the rest of it as one more, once LISTEN_LIST_CHANGED_INTERVAL_MS has passed since the last
// one sent (2026-07-28 basic/patterns/subscriptions, "List Changed Notification"). On a fake
// clock, so the interval is checked to the millisecond whatever the machine's speed.

const TENANT = 'acme';
const URI = 'test://docs/a';
const INTERVAL_MS = 300;

const who: Principal = {
  issuer: 'https://idp',
  subject: 'dee',
  scopes: [],
  groups: [],
  expiresAt: Math.floor(Date.now() / 1000) + 3600,
};

function runtime(): TenantRuntime {
  const options = { resources: [{ uri: URI, name: 'a', text: 'A' }], templates: [] };
  const source = createStaticSource(options, {
    sourceId: 'docs',
    tenantId: TENANT,
    configDir: '.',
    logger: silentLogger,
  });
  const compiled = compileGrants([{ name: 'all', match: {}, allow: [{ source: 'docs' }] }]);
  return {
    config: { id: TENANT, sources: [{ id: 'docs', type: 'static', options }] },
    catalog: { sources: [source] },
    server: { name: 'gw', version: '1' },
    auth: { accessOf: (principal: Principal) => resolveAccess(TENANT, principal, compiled) },
  } as unknown as TenantRuntime;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('list_changed coalescing', () => {
  it('sends the first of a burst at once and the rest as one, not before the interval has passed', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const tenant = runtime();
    const scope = tenant.auth!.accessOf(who)!;
    const bus = createLocalTenantEventBus(silentLogger);
    const pending = await acceptListen(
      { id: 1, filter: { resourcesListChanged: true } },
      { tenant, scope, principal: who, principalKey: 'p' },
      {
        streams: createListenStreams({ limits: { perPrincipal: 0, perTenant: 0, total: 10 }, keepAliveMs: 60_000 }),
        bus,
        tenants: new Map(),
        listChangedIntervalMs: INTERVAL_MS,
      },
    );
    const sent: string[] = [];
    const stop = startCallerSubscription({
      id: 1,
      caller: { tenantId: TENANT, principal: who },
      listChanged: true,
      uris: pending.uris,
      digest: pending.digest,
      reads: pending.reads,
      tenants: new Map([[TENANT, tenant]]),
      bus,
      listChangedIntervalMs: INTERVAL_MS,
      output: { send: (message) => sent.push(message.method), complete: () => expect.fail('no completion expected') },
    });
    const burst = () => {
      for (let i = 0; i < 5; i += 1)
        bus.publish({
          type: 'source',
          tenantId: TENANT,
          sourceId: 'docs',
          change: { type: 'list-changed', uris: [URI] },
        });
    };
    try {
      burst();
      expect(sent).toEqual(['notifications/resources/list_changed']);
      vi.advanceTimersByTime(100);
      burst();
      // The trailing edge waits for the interval counted from the leading send.
      vi.advanceTimersByTime(INTERVAL_MS - 100 - 1);
      expect(sent).toHaveLength(1);
      vi.advanceTimersByTime(1);
      expect(sent).toEqual(['notifications/resources/list_changed', 'notifications/resources/list_changed']);
      // A whole interval later, nothing was left pending; the next change goes at once again.
      vi.advanceTimersByTime(INTERVAL_MS);
      expect(sent).toHaveLength(2);
      burst();
      expect(sent).toHaveLength(3);
    } finally {
      stop();
      pending.slot.release();
    }
  });
});

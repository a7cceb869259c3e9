import { describe, expect, it } from 'vitest';
import { RecentSourceEvents } from '../src/notifications/recent-source-events.js';
import type { TenantEvent } from '../src/notifications/tenant-events.js';

const updated = (uri: string): TenantEvent => ({
  type: 'source',
  tenantId: 'acme',
  sourceId: 'docs',
  change: { type: 'resource-updated', uri },
});

describe('recent source events (one change detected by several replicas)', () => {
  it('admits another replica’s copy again once the window has passed, and never holds back other event types', () => {
    let now = 0;
    const recent = new RecentSourceEvents(1000, 100, () => now);
    expect(recent.admit(updated('docs://a'), 'r1')).toBe(true);
    now = 999;
    expect(recent.admit(updated('docs://a'), 'r2')).toBe(false);
    expect(recent.admit({ type: 'configuration', tenantId: 'acme' }, 'r2')).toBe(true);
    expect(recent.admit({ type: 'configuration', tenantId: 'acme' }, 'r2')).toBe(true);
    now = 1000;
    expect(recent.admit(updated('docs://a'), 'r2')).toBe(true);
  });

  it('tells a list change from an update, and one tenant or source from another', () => {
    const recent = new RecentSourceEvents(1000, 100, () => 0);
    expect(recent.admit(updated('docs://a'), 'r1')).toBe(true);
    expect(
      recent.admit(
        { type: 'source', tenantId: 'acme', sourceId: 'docs', change: { type: 'list-changed', uris: ['docs://a'] } },
        'r2',
      ),
    ).toBe(true);
    expect(recent.admit({ ...updated('docs://a'), tenantId: 'beta' } as TenantEvent, 'r2')).toBe(true);
    expect(recent.admit({ ...updated('docs://a'), sourceId: 'other' } as TenantEvent, 'r2')).toBe(true);
  });

  it('stays within its bound, forgetting the oldest first', () => {
    const recent = new RecentSourceEvents(60_000, 3, () => 0);
    for (const uri of ['docs://1', 'docs://2', 'docs://3', 'docs://4']) recent.admit(updated(uri), 'r1');
    // docs://1 was forgotten: another replica's copy of it gets through; docs://4's does not.
    expect(recent.admit(updated('docs://1'), 'r2')).toBe(true);
    expect(recent.admit(updated('docs://4'), 'r2')).toBe(false);
  });
});

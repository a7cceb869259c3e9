import { describe, expect, it } from 'vitest';
import { isGatewayError } from '@mcpgw/core';
import { createListenStreams } from '../src/listen-streams.js';

// The stream caps of one replica (docs/configuration.md, LISTEN_MAX_STREAMS*):
// which reservation is refused, with which cap named, and that every place
// comes back exactly once.

function refusal(reserve: () => unknown): string {
  try {
    reserve();
  } catch (error) {
    if (isGatewayError(error) && error.code === 'MCPGW_LISTEN_LIMIT') return error.message;
    throw error;
  }
  throw new Error('the reservation was not refused');
}

describe('listen stream caps', () => {
  it('refuses per caller, per tenant and per replica, naming the cap, and frees each place once', () => {
    const streams = createListenStreams({ limits: { perPrincipal: 2, perTenant: 3, total: 5 }, keepAliveMs: 60_000 });
    const a1 = streams.reserve('acme', 'alice');
    streams.reserve('acme', 'alice');
    expect(refusal(() => streams.reserve('acme', 'alice'))).toMatch(/at most 2 per caller/);
    // The same principal key at another tenant is another caller.
    const g1 = streams.reserve('globex', 'alice');
    streams.reserve('acme', 'bob');
    expect(refusal(() => streams.reserve('acme', 'carol'))).toMatch(/at most 3 for this tenant/);
    streams.reserve('globex', 'dave');
    expect(refusal(() => streams.reserve('globex', 'erin'))).toMatch(/at most 5 on this replica/);
    expect([streams.count(), streams.count('acme'), streams.count('globex')]).toEqual([5, 3, 2]);
    a1.release();
    a1.release();
    g1.release();
    expect([streams.count(), streams.count('acme'), streams.count('globex')]).toEqual([3, 2, 1]);
    expect(() => streams.reserve('acme', 'alice').release()).not.toThrow();
  });

  it('completes every open stream on shutdown and refuses new ones after', () => {
    const gauge = { open: 0 };
    const streams = createListenStreams({
      limits: { perPrincipal: 0, perTenant: 0, total: 10 },
      keepAliveMs: 60_000,
      opened: () => {
        gauge.open += 1;
        return () => (gauge.open -= 1);
      },
    });
    const completed: string[] = [];
    for (const name of ['one', 'two']) {
      const slot = streams.reserve('acme', name);
      slot.attach({ keepAlive: () => undefined, complete: () => (completed.push(name), slot.release()) });
    }
    expect(gauge.open).toBe(2);
    streams.completeAll();
    expect(completed).toEqual(['one', 'two']);
    expect([streams.count(), gauge.open]).toEqual([0, 0]);
    expect(refusal(() => streams.reserve('acme', 'three'))).toMatch(/shutting down/);
  });
});

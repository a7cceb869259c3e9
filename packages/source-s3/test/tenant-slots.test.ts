import { describe, expect, it } from 'vitest';
import { acquireTenantSlot, tenantInFlight } from '../src/tenant-slots.js';

const never = new AbortController().signal;

describe('tenant slots', () => {
  it("queue a source behind its own limit even when a sibling's limit is higher, first come first served", async () => {
    const first = await acquireTenantSlot('t-fifo', 1, never);
    const order: string[] = [];
    const strict = acquireTenantSlot('t-fifo', 1, never).then((release) => {
      order.push('strict');
      return release;
    });
    const loose = acquireTenantSlot('t-fifo', 3, never).then((release) => {
      order.push('loose');
      return release;
    });
    // The limit-1 waiter is at the head and the tenant is at 1: both wait (FIFO, no overtaking).
    // A slot is granted synchronously or on a release, so the count tells at once; the order
    // after one turn of the event loop (every promise reaction has run by then).
    expect(tenantInFlight('t-fifo')).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([]);
    first();
    const releaseStrict = await strict;
    const releaseLoose = await loose;
    expect(order).toEqual(['strict', 'loose']);
    expect(tenantInFlight('t-fifo')).toBe(2);
    releaseStrict();
    releaseStrict(); // idempotent
    releaseLoose();
    expect(tenantInFlight('t-fifo')).toBe(0);
  });

  it('drop a waiter whose deadline passes, and let the next one in', async () => {
    const held = await acquireTenantSlot('t-abort', 1, never);
    const controller = new AbortController();
    const doomed = acquireTenantSlot('t-abort', 1, controller.signal);
    const next = acquireTenantSlot('t-abort', 1, never);
    controller.abort(new Error('deadline'));
    await expect(doomed).rejects.toThrow('deadline');
    held();
    const release = await next;
    expect(tenantInFlight('t-abort')).toBe(1);
    release();
    expect(tenantInFlight('t-abort')).toBe(0);
  });
});

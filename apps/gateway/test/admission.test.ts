import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { within } from '@mcpgw/test-helpers/within';
import { Admission } from '../src/routes/admission.js';

// What one MCP request holds (its tenant's runtime lease, its in-flight slot, the controller its work
// observes) over a real socket: freed exactly once whichever way the request ends, and the work
// cancelled only when the client goes away (2026-07-28 basic/patterns/cancellation).

interface Held {
  leases: number;
  slots: number;
  signal?: AbortSignal;
  /** Set by a 'close' listener added after the admission's, so it runs once the admission's has. */
  closed?: true;
}

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** A server whose one route admits the request, then answers at once, after `release()`, or never. */
async function serve(answer: 'at-once' | 'release-first' | 'never', held: Held): Promise<number> {
  app = Fastify();
  app.post('/', async (_request, reply) => {
    const admission = Admission.of(reply);
    reply.raw.once('close', () => (held.closed = true));
    admission.holdLease({ release: () => (held.leases += 1) });
    const controller = new AbortController();
    admission.holdSlot(() => (held.slots += 1), controller);
    held.signal = controller.signal;
    if (answer === 'never') return new Promise(() => undefined);
    if (answer === 'release-first') admission.release();
    return { ok: true };
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return (app.server.address() as AddressInfo).port;
}

function post(port: number, leave = false): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/' }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    if (leave) app!.server.once('request', () => setTimeout(() => req.destroy(), 50));
    req.end();
  });
}

describe('a request admission', () => {
  it('frees its lease and slot once when the response ends, without cancelling the work', async () => {
    const held: Held = { leases: 0, slots: 0 };
    const port = await serve('at-once', held);
    expect(await post(port)).toBe(200);
    await within(2000, () => held.closed === true);
    expect(held).toMatchObject({ leases: 1, slots: 1 });
    expect(held.signal?.aborted).toBe(false);
  });

  it('frees them once although they were released before the response ended (a listen stream)', async () => {
    const held: Held = { leases: 0, slots: 0 };
    const port = await serve('release-first', held);
    expect(await post(port)).toBe(200);
    await within(2000, () => held.closed === true);
    expect(held).toMatchObject({ leases: 1, slots: 1 });
    expect(held.signal?.aborted).toBe(false);
  });

  it('frees them and cancels the work when the client goes away before the answer', async () => {
    const held: Held = { leases: 0, slots: 0 };
    const port = await serve('never', held);
    expect(await post(port, true)).toBe(0);
    await within(2000, () => held.signal?.aborted === true);
    expect(held).toMatchObject({ leases: 1, slots: 1 });
    expect((held.signal?.reason as Error).message).toBe('client disconnected');
  });

  it('holds nothing it is given after the client went away: released and cancelled at once', () => {
    const admission = new Admission();
    admission.connectionClosed(false);
    const held: Held = { leases: 0, slots: 0 };
    admission.holdLease({ release: () => (held.leases += 1) });
    expect(held.leases).toBe(1);
    const controller = new AbortController();
    admission.holdSlot(() => (held.slots += 1), controller);
    expect(held.slots).toBe(1);
    expect(controller.signal.aborted).toBe(true);
  });
});

import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LeaseHandlers } from '@mcpgw/core';
import { type TestDatabase, createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { within } from '@mcpgw/test-helpers/within';
import { advisoryLockKey, createPostgresLeases } from '../src/postgres-leases.js';

// Change-detection leases beside a replica bus on Postgres
// (docs/adr/0012-one-bus-two-transports.md): a lease is a session advisory
// lock on a connection of each replica's own. Two lease sets on the real
// Postgres stand for two replicas; pg_locks says who holds what.

let db: TestDatabase;
let admin: pg.Client;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  db = await createTestDatabase('leases');
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

afterAll(async () => {
  await admin?.end();
  await db?.drop();
});

function replica(retryMs: number) {
  const leases = createPostgresLeases({ url: db.url, retryMs });
  closers.push(() => leases.close());
  const seen: string[] = [];
  const handlers: LeaseHandlers = {
    acquired: (takeover) => seen.push(takeover ? 'takeover' : 'acquired'),
    lost: () => seen.push('lost'),
  };
  return { leases, seen, hold: (name: string) => leases.hold(name, handlers) };
}

/** application_name of the sessions holding the lease's advisory lock. */
async function holdersOf(name: string): Promise<string[]> {
  // pg_locks shows a bigint key as its high and low 32 bits (classid, objid).
  const key = BigInt.asUintN(64, BigInt(advisoryLockKey(`mcpgw:lease:${name}`)));
  const { rows } = await admin.query<{ name: string }>(
    `SELECT a.application_name AS name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.classid = $1::oid AND l.objid = $2::oid`,
    [(key >> 32n).toString(), (key & 0xffffffffn).toString()],
  );
  return rows.map((row) => row.name);
}

/** Resolves once the replica's connection has sent its lock attempt (and is idle after it). */
async function attempted(name: string): Promise<void> {
  await within(5000, async () => {
    const { rows } = await admin.query<{ query: string; state: string }>(
      'SELECT query, state FROM pg_stat_activity WHERE application_name = $1',
      [name],
    );
    expect(rows[0]).toMatchObject({ state: 'idle', query: expect.stringContaining('pg_try_advisory_lock') });
  });
}

describe('Postgres leases', () => {
  it('are held by one of two contending replicas, and taken by the other once released', async () => {
    const [a, b] = [replica(50), replica(50)];
    const releaseA = a.hold('acme/docs');
    await within(5000, () => expect(a.seen).toEqual(['acquired']));
    b.hold('acme/docs');
    await attempted(b.leases.connectionName);
    expect(await holdersOf('acme/docs')).toEqual([a.leases.connectionName]);
    // B tried, found it taken, and is told nothing.
    expect(b.seen).toEqual([]);

    releaseA();
    // B saw the lease held by another before: changes since may have gone unnoticed.
    await within(5000, () => expect(b.seen).toEqual(['takeover']));
    expect(await holdersOf('acme/docs')).toEqual([b.leases.connectionName]);
    expect(a.seen).toEqual(['acquired']);
  });

  it('hold separate leases separately', async () => {
    const [a, b] = [replica(50), replica(50)];
    a.hold('acme/docs');
    await within(5000, () => expect(a.seen).toEqual(['acquired']));
    b.hold('acme/wiki');
    await within(5000, () => expect(b.seen).toEqual(['acquired']));
    expect(await holdersOf('acme/docs')).toEqual([a.leases.connectionName]);
    expect(await holdersOf('acme/wiki')).toEqual([b.leases.connectionName]);
  });

  it('passes to the other replica when the holder’s connection is killed, and the old holder then loses it', async () => {
    // The holder retries slowly, so the contender is the first to try after the kill.
    const [a, b] = [replica(3000), replica(50)];
    a.hold('acme/docs');
    await within(5000, () => expect(a.seen).toEqual(['acquired']));
    b.hold('acme/docs');
    await attempted(b.leases.connectionName);
    expect(b.seen).toEqual([]);

    const { rows } = await admin.query<{ ended: boolean }>(
      'SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE application_name = $1',
      [a.leases.connectionName],
    );
    expect(rows).toEqual([{ ended: true }]);
    await within(5000, () => expect(b.seen).toEqual(['takeover']));
    expect(await holdersOf('acme/docs')).toEqual([b.leases.connectionName]);
    // A reconnects, finds the lease taken, and stops.
    await within(10_000, () => expect(a.seen).toEqual(['acquired', 'lost']));
    expect(await holdersOf('acme/docs')).toEqual([b.leases.connectionName]);
  });

  it('frees every lease when its replica closes', async () => {
    const [a, b] = [replica(50), replica(50)];
    a.hold('acme/docs');
    a.hold('acme/wiki');
    await within(5000, () => expect(a.seen).toEqual(['acquired', 'acquired']));
    b.hold('acme/docs');
    b.hold('acme/wiki');
    await attempted(b.leases.connectionName);
    await a.leases.close();
    await within(5000, () => expect(b.seen).toEqual(['takeover', 'takeover']));
  });

  it('is held by each replica for its own listeners while Postgres does not answer', async () => {
    // Port 1 on loopback: nothing listens, every connection is refused at once.
    const leases = createPostgresLeases({ url: 'postgres://postgres@127.0.0.1:1/postgres', retryMs: 50 });
    closers.push(() => leases.close());
    const seen: string[] = [];
    leases.hold('acme/docs', { acquired: () => seen.push('acquired'), lost: () => seen.push('lost') });
    await within(5000, () => expect(seen).toEqual(['acquired']));
  });
});

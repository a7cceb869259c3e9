import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@mcpgw/core';
import { createTestDatabase, type TestDatabase } from '@mcpgw/test-helpers/postgres';
import { within } from '@mcpgw/test-helpers/within';
import { createPostgresSource, postgresSourceOptionsSchema } from '../src/index.js';
import { connectionConfig } from '../src/connection-config.js';
import { inReadOnlyTransaction } from '../src/read-only-transaction.js';

// A client that disconnects aborts its request's signal; the query it started must end on the
// server then, not run on to statement_timeout holding a backend and a pool slot.

let db: TestDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  db = await createTestDatabase('abort');
  await db.sql(`CREATE VIEW slow AS SELECT 1 AS id FROM pg_sleep(30)`);
  const options = postgresSourceOptionsSchema.parse({ connection: { url: db.url }, schemas: ['public'] });
  pool = new pg.Pool({ ...connectionConfig(options, 'abort'), max: 1 });
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

/** Long enough that only the cancellation can end the statement within the test. */
const timeouts = { statementTimeoutMs: 60_000, lockTimeoutMs: 1_000 };

/**
 * Backends of the test database inside a pg_sleep right now, whatever their
 * statement's text (a read of the view `slow` does not mention pg_sleep).
 */
async function sleepingBackends(): Promise<number> {
  const { rows } = await db.sql(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()
        AND wait_event = 'PgSleep'`,
  );
  return (rows[0] as { n: number }).n;
}

/**
 * Aborts `controller` once the server runs the pg_sleep (another process:
 * polled, with a deadline); `work` must then fail with the abort, leaving
 * no backend sleeping.
 */
async function abortWhileSleeping(controller: AbortController, work: Promise<unknown>): Promise<void> {
  await within(10_000, async () => expect(await sleepingBackends()).toBe(1), 'the pg_sleep running');
  controller.abort();
  // Ended by the abort: the 30 s sleep outlasts the test's own timeout, and no backend sleeps on.
  await expect(work).rejects.toMatchObject({ name: 'AbortError' });
  expect(await sleepingBackends()).toBe(0);
}

describe('a query whose request is aborted', () => {
  it('is cancelled on the server within moments of the abort', async () => {
    const controller = new AbortController();
    const outcome = inReadOnlyTransaction(pool, timeouts, (q) => q('SELECT pg_sleep(30)', []), controller.signal);
    await abortWhileSleeping(controller, outcome);
    // The pool (one connection) serves the next caller: the cancelled connection was replaced.
    expect(await inReadOnlyTransaction(pool, timeouts, (q) => q('SELECT 1 AS one', []))).toEqual([{ one: 1 }]);
  });

  it('never starts when the signal is already aborted', async () => {
    let ran = false;
    const outcome = inReadOnlyTransaction(
      pool,
      timeouts,
      async () => {
        ran = true;
        return [];
      },
      AbortSignal.abort(),
    );
    await expect(outcome).rejects.toMatchObject({ name: 'AbortError' });
    expect(ran).toBe(false);
  });

  it('ends a source read of a slow view when the reader goes away', async () => {
    const source = createPostgresSource(
      postgresSourceOptionsSchema.parse({
        connection: { url: db.url },
        schemas: ['public'],
        statementTimeoutMs: 60_000,
        rows: { enabled: true },
      }),
      'abort-src',
      silentLogger,
    );
    try {
      const controller = new AbortController();
      const reading = source.read('db+postgres:///abort-src/public/slow/rows?limit=1', controller.signal);
      await abortWhileSleeping(controller, reading);
    } finally {
      await source.close?.();
    }
  });
});

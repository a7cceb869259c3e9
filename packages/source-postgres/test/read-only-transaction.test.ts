import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@mcpgw/test-helpers/postgres';
import { postgresSourceOptionsSchema } from '../src/postgres-source-options.js';
import { connectionConfig } from '../src/connection-config.js';
import { inReadOnlyTransaction } from '../src/read-only-transaction.js';

let db: TestDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  db = await createTestDatabase('readonly');
  await db.sql('CREATE TABLE t (id int); INSERT INTO t VALUES (1)');
  const options = postgresSourceOptionsSchema.parse({ connection: { url: db.url }, schemas: ['public'] });
  pool = new pg.Pool({ ...connectionConfig(options, 'ro'), max: 2 });
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const timeouts = { statementTimeoutMs: 300, lockTimeoutMs: 150 };

describe('inReadOnlyTransaction', () => {
  it('runs under READ ONLY with transaction-local timeouts', async () => {
    const settings = await inReadOnlyTransaction(pool, timeouts, (q) =>
      q<{ ro: string; st: string; lt: string }>(
        `SELECT current_setting('transaction_read_only') AS ro, current_setting('statement_timeout') AS st,
                current_setting('lock_timeout') AS lt`,
        [],
      ),
    );
    expect(settings).toEqual([{ ro: 'on', st: '300ms', lt: '150ms' }]);
    // SET LOCAL ends with the transaction: the pooled session is back to its defaults.
    const client = await pool.connect();
    try {
      const { rows } = await client.query(`SELECT current_setting('statement_timeout') AS st`);
      expect(rows).toEqual([{ st: '0' }]);
    } finally {
      client.release();
    }
  });

  it('refuses writes (SQLSTATE 25006) and leaves data unchanged', async () => {
    await expect(
      inReadOnlyTransaction(pool, timeouts, (q) => q('INSERT INTO public.t VALUES (2)', [])),
    ).rejects.toMatchObject({
      code: '25006',
    });
    await expect(inReadOnlyTransaction(pool, timeouts, (q) => q('SELECT 1 FROM t; DELETE FROM t', []))).rejects.toThrow(
      /cannot insert multiple commands into a prepared statement/,
    );
    const { rows } = await db.sql('SELECT count(*)::int AS n FROM t');
    expect(rows).toEqual([{ n: 1 }]);
  });

  it('sends even parameterless queries as one statement (extended protocol)', async () => {
    await expect(inReadOnlyTransaction(pool, timeouts, (q) => q('SELECT 1; SELECT 2', []))).rejects.toThrow(
      /multiple commands/,
    );
  });

  it('ends a statement at statement_timeout and the connection is usable again', async () => {
    // Ended by the 300 ms statement_timeout (57014, query_canceled): the 3 s sleep, run to its end, would have answered.
    await expect(inReadOnlyTransaction(pool, timeouts, (q) => q('SELECT pg_sleep(3)', []))).rejects.toMatchObject({
      code: '57014',
    });
    expect(await inReadOnlyTransaction(pool, timeouts, (q) => q('SELECT 1 AS one', []))).toEqual([{ one: 1 }]);
  });

  it('opens sessions read-only by default, a second line of defence', async () => {
    const client = await pool.connect();
    try {
      await expect(client.query('INSERT INTO public.t VALUES (3)')).rejects.toMatchObject({ code: '25006' });
    } finally {
      client.release();
    }
  });
});

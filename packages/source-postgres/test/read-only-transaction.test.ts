import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@mcpgw/test-helpers/postgres';
import { postgresSourceOptionsSchema } from '../src/postgres-source-options.js';
import { connectionConfig } from '../src/connection-config.js';
import { inReadOnlyTransaction, RoleSwitchRefused } from '../src/read-only-transaction.js';

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

describe('inReadOnlyTransaction on one pooled connection', () => {
  /** One connection: every read below reuses the session of the one before. */
  let single: pg.Pool;
  const notices: string[] = [];
  beforeAll(async () => {
    await db.sql(`CREATE FUNCTION public.shout() RETURNS int LANGUAGE plpgsql AS $$
      BEGIN RAISE NOTICE 'shout ran'; RETURN 1; END $$`);
    const options = postgresSourceOptionsSchema.parse({ connection: { url: db.url }, schemas: ['public'] });
    single = new pg.Pool({ ...connectionConfig(options, 'ro1'), max: 1 });
    single.on('connect', (client) => client.on('notice', (notice) => notices.push(notice.message ?? '')));
  });
  afterAll(async () => {
    await single?.end();
  });

  /** What the next caller finds on the connection, read the way the source reads. */
  const leftOver = () =>
    inReadOnlyTransaction(single, timeouts, async (q) => {
      const [row] = await q<Record<string, unknown>>(
        `SELECT pg_backend_pid() AS pid, current_setting('work_mem') AS work_mem,
                current_setting('search_path') AS search_path, current_setting('application_name') AS app,
                current_setting('mcpgw.subject', true) AS subject, current_user::text AS role,
                (SELECT count(*)::int FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()) AS locks,
                (SELECT count(*)::int FROM pg_prepared_statements) AS prepared`,
        [],
      );
      return row!;
    });

  it('applies the timeouts and READ ONLY to later statements, not only the first', async () => {
    await expect(
      inReadOnlyTransaction(single, timeouts, async (q) => {
        await q('SELECT 1', []);
        return q('INSERT INTO public.t VALUES (4)', []);
      }),
    ).rejects.toMatchObject({ code: '25006' });
    await expect(
      inReadOnlyTransaction(single, timeouts, async (q) => {
        await q('SELECT 1', []);
        return q('SELECT pg_sleep(3)', []);
      }),
    ).rejects.toMatchObject({ code: '57014' });
  });

  it('applies lock_timeout to the first statement', async () => {
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      await holder.query('BEGIN; LOCK TABLE public.t IN ACCESS EXCLUSIVE MODE');
      // 55P03 lock_not_available: the 150 ms lock_timeout, not the 300 ms statement_timeout (57014).
      await expect(
        inReadOnlyTransaction(single, timeouts, (q) => q('SELECT * FROM public.t', [])),
      ).rejects.toMatchObject({ code: '55P03' });
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
  });

  it('leaves nothing of a read on the connection: session settings, advisory locks, prepared statements', async () => {
    const before = await leftOver();
    await inReadOnlyTransaction(single, timeouts, async (q) => {
      await q(`SELECT set_config('work_mem', '77MB', false), set_config('search_path', 'public', false)`, []);
      await q('SELECT pg_advisory_lock(4242)', []);
      await q('PREPARE left_behind AS SELECT 1', []);
      return q('SELECT 1', []);
    });
    const after = await leftOver();
    expect(after.pid).toBe(before.pid);
    expect(after).toEqual(before);
    expect(after).toMatchObject({ search_path: 'pg_catalog,pg_temp', locks: 0, prepared: 0 });
  });

  it("does not show one caller's role and settings to the next read on the connection", async () => {
    const before = await leftOver();
    const session = {
      role: before.role as string,
      settings: [
        ['mcpgw.subject', 'alice'],
        ['application_name', 'mcpgw:ro1:alice'],
      ] as const,
    };
    const seen = await inReadOnlyTransaction(
      single,
      timeouts,
      (q) =>
        q<{ subject: string; app: string }>(
          `SELECT current_setting('mcpgw.subject') AS subject, current_setting('application_name') AS app`,
          [],
        ),
      undefined,
      session,
    );
    expect(seen).toEqual([{ subject: 'alice', app: 'mcpgw:ro1:alice' }]);
    const after = await leftOver();
    expect(after.pid).toBe(before.pid);
    expect(after.subject === '' || after.subject === null).toBe(true);
    expect(after.app).toBe('mcpgw:ro1');
  });

  it('leaves the connection clean when a query fails mid-transaction', async () => {
    const before = await leftOver();
    await expect(
      inReadOnlyTransaction(single, timeouts, async (q) => {
        await q(`SELECT set_config('work_mem', '77MB', false), pg_advisory_lock(77)`, []);
        await q('PREPARE failed_behind AS SELECT 1', []);
        return q('SELECT 1 / 0', []);
      }),
    ).rejects.toMatchObject({ code: '22012' });
    const after = await leftOver();
    expect(after.pid).toBe(before.pid);
    expect(after).toEqual(before);
  });

  it('never runs the first query when the setup fails: a refused role is RoleSwitchRefused', async () => {
    notices.length = 0;
    const session = { role: 'mcpgw_no_such_role', settings: [] };
    await expect(
      inReadOnlyTransaction(single, timeouts, (q) => q('SELECT public.shout()', []), undefined, session),
    ).rejects.toBeInstanceOf(RoleSwitchRefused);
    expect(notices).toEqual([]);
    // The same query with a usable setup runs, and is heard.
    await inReadOnlyTransaction(single, timeouts, (q) => q('SELECT public.shout()', []));
    expect(notices).toEqual(['shout ran']);
    expect((await leftOver()).locks).toBe(0);
  });
});

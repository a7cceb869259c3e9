import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Source } from '@mcpgw/core';
import { createFixture, readText, type Fixture } from './fixture.js';

/**
 * A read-only transaction still runs whatever volatile functions a published
 * view calls. What such a view leaves behind in its session (settings,
 * session advisory locks, notifications) must not outlive the read, and a
 * pooled connection must come back to the next caller as it was opened.
 */
const P = 'db+postgres:///tricks';
let fx: Fixture;
/** One connection, so the second read reuses the first read's session. */
let source: Source;

beforeAll(async () => {
  fx = await createFixture('session_state');
  await fx.db.sql(`
    CREATE VIEW public.path_changer AS
      SELECT pg_catalog.set_config('search_path', 'public, evil', false) AS changed,
             pg_catalog.set_config('work_mem', '77MB', false) AS work_mem;
    CREATE VIEW public.locker AS SELECT pg_catalog.pg_advisory_lock(4242)::text AS locked;
    CREATE VIEW public.notifier AS SELECT pg_catalog.pg_notify('gateway_side_effect', 'from a view')::text AS sent;
    CREATE FUNCTION public.prepare_one() RETURNS text LANGUAGE plpgsql AS $$
      BEGIN EXECUTE 'PREPARE left_behind AS SELECT 1'; RETURN 'prepared'; END $$;
    CREATE VIEW public.preparer AS SELECT public.prepare_one() AS done;
    CREATE VIEW public.prepared AS
      SELECT pg_catalog.count(*)::int AS statements FROM pg_catalog.pg_prepared_statements;
    CREATE VIEW public.session_view AS
      SELECT pg_catalog.current_setting('search_path') AS search_path,
             pg_catalog.current_setting('work_mem') AS work_mem;
  `);
  source = fx.make({ rows: { enabled: true }, pool: { max: 1 } }, 'tricks');
});
afterAll(async () => {
  await fx?.close();
});

async function rowsOf(view: string): Promise<Array<Record<string, unknown>>> {
  return (JSON.parse(await readText(source, `${P}/public/${view}/rows`)) as { rows: Array<Record<string, unknown>> })
    .rows;
}

describe('session state a view leaves behind', () => {
  it('pins search_path to pg_catalog, pg_temp (pg_temp last) on every connection', async () => {
    const [row] = await rowsOf('session_view');
    expect(row?.search_path).toBe('pg_catalog,pg_temp');
  });

  it('does not carry set_config(..., false) into the next read on the same connection', async () => {
    const [first] = await rowsOf('path_changer');
    expect(first?.changed).toBe('public, evil');
    const [after] = await rowsOf('session_view');
    expect(after?.search_path).toBe('pg_catalog,pg_temp');
    expect(after?.work_mem).not.toBe('77MB');
  });

  it('releases a session advisory lock a view took before the connection is reused', async () => {
    await rowsOf('locker');
    await rowsOf('locker');
    const { rows } = await fx.db.sql(
      `SELECT count(*)::int AS n FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND a.application_name = 'mcpgw:tricks'`,
    );
    expect(rows[0]?.n).toBe(0);
  });

  it('drops a prepared statement a view created, which outlives ROLLBACK', async () => {
    const [done] = await rowsOf('preparer');
    expect(done?.done).toBe('prepared');
    const [after] = await rowsOf('prepared');
    expect(after?.statements).toBe(0);
  });

  it('delivers no notification a view sent', async () => {
    const listener = new pg.Client({ connectionString: fx.db.url });
    await listener.connect();
    try {
      const seen: string[] = [];
      let marker: () => void = () => {};
      const markerSeen = new Promise<void>((resolve) => (marker = resolve));
      listener.on('notification', (n) => {
        seen.push(n.payload ?? '');
        if (n.payload === 'marker') marker();
      });
      await listener.query('LISTEN gateway_side_effect');
      await rowsOf('notifier');
      // Notifications arrive in commit order: once our own marker, sent after
      // the read ended, has arrived, one the read had committed would have too.
      await fx.db.sql(`SELECT pg_catalog.pg_notify('gateway_side_effect', 'marker')`);
      await markerSeen;
      expect(seen).toEqual(['marker']);
    } finally {
      await listener.end();
    }
  });
});

import { afterEach, describe, expect, it, vi } from 'vitest';
import { MIGRATIONS, type Migration } from '../src/migrations/index.js';
import { migrate, MigrationError } from '../src/migrate.js';
import { ENGINES, type EngineUnderTest } from './engines.js';

// PGlite starts a WebAssembly Postgres per test; on a loaded machine that takes seconds.
vi.setConfig({ testTimeout: 60_000 });

const TABLES = [
  'admin_role_bindings',
  'admin_sessions',
  'audit_events',
  'authorization_servers',
  'authorization_server_accounts',
  'authorization_server_records',
  'authorization_server_signing_keys',
  'grants',
  'issuers',
  'operator_sessions',
  'sources',
  'tenants',
];

describe.each(Object.keys(ENGINES) as (keyof typeof ENGINES)[])('migrations on %s', (engine) => {
  let under: EngineUnderTest | undefined;
  afterEach(async () => {
    await under?.dispose();
    under = undefined;
  });
  const open = async (): Promise<EngineUnderTest> => (under = await ENGINES[engine]());

  async function tables(): Promise<string[]> {
    const { rows } = await under!.db.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`,
    );
    return rows.map((row) => row.table_name);
  }

  it('creates the schema on an empty database and records the version', async () => {
    const { db } = await open();
    expect(await migrate(db)).toEqual({ applied: MIGRATIONS.map((m) => m.version), version: MIGRATIONS.length });
    expect(await tables()).toEqual(['control_plane_migrations', ...TABLES].sort());
  });

  it('is a no-op on a current database', async () => {
    const { db } = await open();
    await migrate(db);
    expect(await migrate(db)).toEqual({ applied: [], version: MIGRATIONS.length });
  });

  it('checks a current database with one query, taking neither a transaction nor the lock', async () => {
    const { db } = await open();
    await migrate(db);
    const statements: string[] = [];
    const counted = {
      ...db,
      query: ((text: string, values?: readonly unknown[]) => {
        statements.push(text);
        return db.query(text, values);
      }) as typeof db.query,
      exec: (script: string) => (statements.push(script), db.exec(script)),
      transaction: <T>(work: Parameters<typeof db.transaction<T>>[0]) => (
        statements.push('BEGIN'),
        db.transaction(work)
      ),
    };
    expect(await migrate(counted)).toEqual({ applied: [], version: MIGRATIONS.length });
    expect(statements).toEqual(['SELECT version, name, checksum FROM control_plane_migrations ORDER BY version']);
  });

  it('moves a database at the previous version forward, keeping its rows', async () => {
    const { db } = await open();
    const next: Migration = {
      version: MIGRATIONS.length + 1,
      name: 'tenant-contact',
      sql: 'ALTER TABLE tenants ADD COLUMN contact text',
    };
    await migrate(db);
    await db.query(`INSERT INTO tenants (id, document) VALUES ('acme', '{}')`);
    expect(await migrate(db, [...MIGRATIONS, next])).toEqual({ applied: [next.version], version: next.version });
    const { rows } = await db.query('SELECT id, contact FROM tenants');
    expect(rows).toEqual([{ id: 'acme', contact: null }]);
  });

  it('refuses a database newer than the gateway, naming both versions', async () => {
    const { db } = await open();
    const next: Migration = { version: MIGRATIONS.length + 1, name: 'later', sql: 'SELECT 1' };
    await migrate(db, [...MIGRATIONS, next]);
    await expect(migrate(db)).rejects.toThrow(
      new MigrationError(
        `the control-plane database is at schema version ${next.version}, newer than this gateway knows (${MIGRATIONS.length}); run a gateway at least as new as the one that migrated it`,
      ),
    );
  });

  it('refuses an applied migration whose contents changed', async () => {
    const { db } = await open();
    await migrate(db);
    const edited = MIGRATIONS.map((m, i) => (i === 0 ? { ...m, sql: `${m.sql}\n-- edited` } : m));
    await expect(migrate(db, edited)).rejects.toThrow(/was applied with different contents/);
  });

  it('leaves the previous version whole when a migration fails halfway', async () => {
    const { db } = await open();
    await migrate(db);
    const broken: Migration[] = [
      ...MIGRATIONS,
      { version: MIGRATIONS.length + 1, name: 'good', sql: 'CREATE TABLE extra (id int)' },
      { version: MIGRATIONS.length + 2, name: 'bad', sql: 'ALTER TABLE no_such_table ADD COLUMN x int' },
    ];
    await expect(migrate(db, broken)).rejects.toThrow(/no_such_table/);
    expect(await tables()).not.toContain('extra');
    const { rows } = await db.query<{ version: number }>(
      'SELECT max(version) AS version FROM control_plane_migrations',
    );
    expect(rows[0]?.version).toBe(MIGRATIONS.length);
  });

  if (engine === 'postgres') {
    it('lets two replicas start at once: one migrates, the other waits and finds nothing to do', async () => {
      const { connectAgain } = await open();
      const replicas = [connectAgain!(), connectAgain!(), connectAgain!()];
      const reports = await Promise.all(replicas.map((db) => migrate(db)));
      expect(reports.map((r) => r.applied).sort()).toEqual([[], [], MIGRATIONS.map((m) => m.version)]);
    });
  }
});

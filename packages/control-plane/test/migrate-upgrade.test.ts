import { sealedCredentialKeys } from '@mcpgw/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createControlPlaneStore } from '../src/control-plane-store.js';
import { MIGRATIONS } from '../src/migrations/index.js';
import { migrate } from '../src/migrate.js';
import { createSecretBox } from '../src/secret-box.js';
import { createSourceSecrets } from '../src/source-secrets.js';
import type { SqlDatabase } from '../src/sql-database.js';
import { ENGINES, type EngineUnderTest } from './engines.js';

// Upgrades, generic over MIGRATIONS: whatever the newest version N is, a
// database at N-1 holding data in N-1's shape migrates to N with its data
// readable and writable through the current store, and ends with exactly
// the schema a database migrated from empty has. Adding a migration needs
// no change here unless it changes the shape the seed below writes: then add
// a seed for the version it starts from (SEEDS picks the newest one that
// fits the previous version).

// PGlite starts a WebAssembly Postgres per database; on a loaded machine that takes seconds.
vi.setConfig({ testTimeout: 90_000 });

const box = createSecretBox(sealedCredentialKeys([Buffer.from('a server secret of at least thirty-two characters')]));
const CANARY = { token: 'canary-upgrade-secret' };

/** Rows written with plain SQL in the shape of schema `schemaVersion`, as a gateway of that version wrote them. */
interface Seed {
  readonly schemaVersion: number;
  write(db: SqlDatabase): Promise<void>;
}

const SEEDS: readonly Seed[] = [
  {
    schemaVersion: 1,
    async write(db) {
      const actor = JSON.stringify({ kind: 'bootstrap', subject: '/etc/gateway.yaml' });
      await db.exec(`
        INSERT INTO tenants (id, document, status, managed_by, version, revision)
          VALUES ('acme', '{"name":"Acme"}', 'suspended', 'bootstrap', 2, 5);
        INSERT INTO issuers (tenant_id, name, document)
          VALUES ('acme', 'https://idp.acme.example', '{"issuer":"https://idp.acme.example","discovery":true}');
        INSERT INTO grants (tenant_id, name, document)
          VALUES ('acme', 'everyone', '{"match":{},"allow":[{"source":"docs"}]}');
        INSERT INTO admin_role_bindings (tenant_id, name, document) VALUES ('acme', 'admins', '{"groups":["it"]}');`);
      await db.query(
        `INSERT INTO sources (tenant_id, name, document, sealed_secrets) VALUES ('acme', 'docs', $1, $2)`,
        [JSON.stringify({ type: 'files', root: './docs' }), createSourceSecrets(box).seal('acme', 'docs', CANARY)],
      );
      for (const [action, type, id] of [
        ['create', 'tenant', 'acme'],
        ['create', 'issuer', 'https://idp.acme.example'],
        ['create', 'source', 'docs'],
        ['create', 'grant', 'everyone'],
        ['update', 'tenant', 'acme'],
      ]) {
        await db.query(
          `INSERT INTO audit_events (tenant_id, actor, action, target_type, target_id, after) VALUES ('acme', $1, $2, $3, $4, '{}')`,
          [actor, action, type, id],
        );
      }
    },
  },
];

/** Tables, columns, indexes and constraints of the public schema, in a stable order. */
async function schemaOf(db: SqlDatabase): Promise<unknown> {
  const columns = await db.query(
    `SELECT table_name, column_name, data_type, is_nullable, column_default, is_identity
       FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, column_name`,
  );
  const indexes = await db.query(
    `SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY tablename, indexname`,
  );
  const constraints = await db.query(
    `SELECT conrelid::regclass::text AS table_name, conname, pg_get_constraintdef(oid) AS definition
       FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY 1, 2`,
  );
  return { columns: columns.rows, indexes: indexes.rows, constraints: constraints.rows };
}

const newest = MIGRATIONS.length;
const previous = newest - 1;

describe.each(Object.keys(ENGINES) as (keyof typeof ENGINES)[])('upgrading the schema on %s', (engine) => {
  const opened: EngineUnderTest[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((under) => under.dispose()));
  });
  const open = async (): Promise<SqlDatabase> => {
    const under = await ENGINES[engine]();
    opened.push(under);
    return under.db;
  };

  it(`gives a database migrated from version ${previous} the schema of one migrated from empty`, async () => {
    const fromEmpty = await open();
    expect((await migrate(fromEmpty)).applied).toEqual(MIGRATIONS.map((m) => m.version));
    const upgraded = await open();
    await migrate(upgraded, MIGRATIONS.slice(0, previous));
    expect(await migrate(upgraded)).toEqual({ applied: [newest], version: newest });
    expect(await schemaOf(upgraded)).toEqual(await schemaOf(fromEmpty));
    const { rows } = await upgraded.query<{ version: number; name: string }>(
      'SELECT version, name FROM control_plane_migrations ORDER BY version',
    );
    expect(rows).toEqual(MIGRATIONS.map(({ version, name }) => ({ version, name })));
  });

  it(`keeps what a version-${previous} gateway wrote, readable and writable through the current store`, async () => {
    const db = await open();
    await migrate(db, MIGRATIONS.slice(0, previous));
    const seed = SEEDS.filter((candidate) => candidate.schemaVersion <= previous).at(-1);
    if (seed === undefined) throw new Error(`no seed fits schema version ${previous}: add one to SEEDS`);
    await seed.write(db);
    await migrate(db);

    const store = createControlPlaneStore({ db, secrets: box });
    expect(await store.getTenant('acme')).toMatchObject({
      document: { name: 'Acme' },
      status: 'suspended',
      managedBy: 'bootstrap',
      version: 2,
      revision: 5,
    });
    expect((await store.listEntities('acme', 'issuer')).map((e) => e.name)).toEqual(['https://idp.acme.example']);
    expect(await store.listEntities('acme', 'source')).toEqual([
      expect.objectContaining({ name: 'docs', document: { type: 'files', root: './docs' }, secretNames: ['token'] }),
    ]);
    expect(await store.openSourceSecrets('acme', 'docs')).toEqual(CANARY);
    expect((await store.listEntities('acme', 'grant')).map((e) => e.name)).toEqual(['everyone']);
    expect((await store.listEntities('acme', 'admin-role-binding')).map((e) => e.name)).toEqual(['admins']);
    expect(await store.auditEvents('acme')).toHaveLength(5);
    expect((await store.auditEvents('acme', { action: 'update' })).map((e) => e.targetType)).toEqual(['tenant']);
    expect((await store.auditEvents('acme', { targetType: 'source' })).map((e) => e.targetId)).toEqual(['docs']);

    // And the upgraded rows take new writes as usual: versions and revision carry on from the old ones.
    const admin = { actor: { kind: 'operator', subject: 'olga' } } as const;
    const grant = await store.putEntity(admin, 'acme', 'grant', 'everyone', { match: {}, allow: [] }, { ifVersion: 1 });
    expect(grant.version).toBe(2);
    expect((await store.getTenant('acme'))?.revision).toBe(6);
    expect(await store.auditEvents('acme')).toHaveLength(6);
  });
});

import { sealedCredentialKeys } from '@mcpgw/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ControlPlaneStore } from '../src/control-plane-store.js';
import type { SqlDatabase } from '../src/sql-database.js';
import type { WriteContext } from '../src/write-context.js';
import { createControlPlaneStore } from '../src/control-plane-store.js';
import { ArchiveError, exportControlPlane, importControlPlane, resealing } from '../src/control-plane-archive.js';
import { createSecretBox } from '../src/secret-box.js';
import { migrate } from '../src/migrate.js';
import { ENGINES, type EngineUnderTest } from './engines.js';

// PGlite starts a WebAssembly Postgres per store; on a loaded machine that takes seconds.
vi.setConfig({ testTimeout: 90_000 });

const OLD_KEY = createSecretBox(
  sealedCredentialKeys([Buffer.from('the exporting store secret, thirty-two characters+')]),
);
const NEW_KEY = createSecretBox(
  sealedCredentialKeys([Buffer.from('the importing store secret, thirty-two characters+')]),
);
const admin: WriteContext = {
  actor: { kind: 'tenant-admin', subject: 'alice', issuer: 'https://idp.acme.example' },
  clientAddress: '192.0.2.7',
};
const CREDENTIALS = { 'credentials.accessKeyId': 'AKIA0001', 'credentials.secretAccessKey': 'canary-secret' };

const opened: EngineUnderTest[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((engine) => engine.dispose()));
});

async function open(
  engine: keyof typeof ENGINES,
  box = OLD_KEY,
): Promise<{ db: SqlDatabase; store: ControlPlaneStore }> {
  const under = await ENGINES[engine]();
  opened.push(under);
  await migrate(under.db);
  return { db: under.db, store: createControlPlaneStore({ db: under.db, secrets: box }) };
}

/** A store with two tenants, every kind of entity, sealed credentials, a deletion and a dozen audit events. */
async function populate(store: ControlPlaneStore): Promise<void> {
  for (const id of ['acme', 'globex']) {
    await store.createTenant(admin, id, {
      document: { name: id.toUpperCase(), auth: { requiredScopes: ['mcp:read'] } },
    });
    await store.putEntity(admin, id, 'issuer', `https://idp.${id}.example`, {
      issuer: `https://idp.${id}.example`,
      discovery: true,
    });
    await store.putEntity(
      admin,
      id,
      'source',
      'reports',
      { type: 's3', bucket: `${id}-reports`, region: 'eu-west-1' },
      { secrets: CREDENTIALS },
    );
    await store.putEntity(admin, id, 'source', 'notes', { type: 'static', resources: [] });
    await store.putEntity(admin, id, 'grant', 'readers', {
      match: { scopes: ['mcp:read'] },
      allow: [{ source: 'reports' }],
    });
    await store.putEntity(admin, id, 'admin-role-binding', 'admins', { groups: [`${id}-admins`] });
  }
  await store.deleteEntity(admin, 'globex', 'source', 'notes');
}

/** What a reader of the store sees: tenants, entities in order, credentials opened, the audit log. */
async function view(store: ControlPlaneStore): Promise<unknown> {
  const tenants = await store.listTenants();
  return Promise.all(
    tenants.map(async (tenant) => ({
      tenant,
      entities: await Promise.all(
        (['issuer', 'source', 'grant', 'admin-role-binding'] as const).map((kind) =>
          store.listEntities(tenant.id, kind),
        ),
      ),
      secrets: await store.openSourceSecrets(tenant.id, 'reports'),
      audit: await store.auditEvents(tenant.id, { limit: 200 }),
    })),
  );
}

describe.each([
  ['pglite', 'postgres'],
  ['postgres', 'postgres'],
] as const)('a control-plane archive from %s into %s', (from, into) => {
  it('restores every tenant, entity, version, credential and audit event as they were', async () => {
    const source = await open(from);
    await populate(source.store);
    const archive = JSON.parse(JSON.stringify(await exportControlPlane(source.db)));
    expect(JSON.stringify(archive)).not.toContain('canary-secret');

    const target = await open(into);
    const report = await importControlPlane(target.db, archive, { reseal: resealing(OLD_KEY, []) });
    expect(report.rows).toMatchObject({ tenants: 2, sources: 3, grants: 2, issuers: 2, admin_role_bindings: 2 });
    expect(await view(target.store)).toEqual(await view(source.store));

    // Later writes carry on after the imported ones: ids, ordinals and revisions continue.
    const newestId = async () =>
      Number((await target.db.query<{ id: string }>('SELECT max(id)::text AS id FROM audit_events')).rows[0]?.id);
    const before = await newestId();
    await target.store.putEntity(admin, 'acme', 'grant', 'more', { match: {}, allow: [{ source: 'notes' }] });
    expect(await newestId()).toBe(before + 1);
    const sources = await target.store.listEntities('acme', 'source');
    await target.store.putEntity(admin, 'acme', 'source', 'later', { type: 'static', resources: [] });
    expect((await target.store.listEntities('acme', 'source')).map((s) => s.name)).toEqual([
      ...sources.map((s) => s.name),
      'later',
    ]);
  });
});

describe('importing', () => {
  it('seals credentials again under the importing store key when they opened with the exporting one', async () => {
    const source = await open('pglite', OLD_KEY);
    await populate(source.store);
    const archive = await exportControlPlane(source.db);
    const target = await open('postgres', NEW_KEY);
    const report = await importControlPlane(target.db, archive, { reseal: resealing(NEW_KEY, [OLD_KEY]) });
    expect(report.resealed).toBe(2);
    expect(await target.store.openSourceSecrets('acme', 'reports')).toEqual(CREDENTIALS);
    // Sealed with the new key alone: the old one no longer opens them.
    const { rows } = await target.db.query<{ sealed_secrets: string }>(
      "SELECT sealed_secrets FROM sources WHERE name = 'reports'",
    );
    for (const row of rows) expect(() => OLD_KEY.open(row.sealed_secrets, 'acme/reports')).toThrow();
  });

  it('refuses credentials that open with no key given, and leaves the store empty', async () => {
    const source = await open('postgres', OLD_KEY);
    await populate(source.store);
    const archive = await exportControlPlane(source.db);
    const target = await open('postgres', NEW_KEY);
    await expect(importControlPlane(target.db, archive, { reseal: resealing(NEW_KEY, []) })).rejects.toThrow(
      /open with none of the keys given/,
    );
    expect((await target.db.query('SELECT * FROM tenants')).rows).toEqual([]);
  });

  it('refuses a store that already holds rows, another schema version, and what is not an archive', async () => {
    const source = await open('postgres');
    await populate(source.store);
    const archive = await exportControlPlane(source.db);
    await expect(importControlPlane(source.db, archive)).rejects.toThrow(/not empty \(table \w+ has rows\)/);
    const target = await open('postgres');
    await expect(importControlPlane(target.db, { ...archive, schemaVersion: 999 })).rejects.toThrow(
      /schema version 999, this store is at/,
    );
    await expect(importControlPlane(target.db, { tables: {} })).rejects.toBeInstanceOf(ArchiveError);
    await expect(
      importControlPlane(target.db, { ...archive, tables: { ...archive.tables, secrets_of_the_host: [] } }),
    ).rejects.toThrow(/tables this schema does not: secrets_of_the_host/);
    expect((await target.db.query('SELECT * FROM audit_events')).rows).toEqual([]);
  });
});

import { sealedCredentialKeys } from '@mcpgw/core';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ControlPlaneStore } from '../src/control-plane-store.js';
import type { SqlDatabase } from '../src/sql-database.js';
import type { WriteContext } from '../src/write-context.js';
import { CONTROL_PLANE_CHANNEL, createControlPlaneStore } from '../src/control-plane-store.js';
import { createSecretBox } from '../src/secret-box.js';
import { migrate } from '../src/migrate.js';
import { StoreError } from '../src/store-error.js';
import { ENGINES, type EngineUnderTest } from './engines.js';

// PGlite starts a WebAssembly Postgres per test; on a loaded machine that takes seconds.
vi.setConfig({ testTimeout: 60_000 });

const box = createSecretBox(sealedCredentialKeys([Buffer.from('a server secret of at least thirty-two characters')]));
const admin: WriteContext = {
  actor: { kind: 'tenant-admin', subject: 'alice', issuer: 'https://idp.acme.example' },
  clientAddress: '192.0.2.7',
};
const S3_DOCUMENT = { type: 's3', bucket: 'reports', region: 'eu-west-1' };
const CREDENTIALS = { accessKeyId: 'AKIACANARY0000000001', secretAccessKey: 'canary-secret-value-do-not-leak' };

async function errorOf(promise: Promise<unknown>): Promise<StoreError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof StoreError) return error;
    throw error;
  }
  throw new Error('expected a StoreError');
}

async function dumpAll(db: SqlDatabase): Promise<string> {
  const tables = ['tenants', 'issuers', 'grants', 'admin_role_bindings', 'audit_events'];
  const parts = await Promise.all(
    tables.map(async (table) => JSON.stringify((await db.query(`SELECT * FROM ${table}`)).rows)),
  );
  const sources = await db.query('SELECT tenant_id, name, document, version FROM sources');
  return parts.join('\n') + JSON.stringify(sources.rows);
}

describe.each(Object.keys(ENGINES) as (keyof typeof ENGINES)[])('control-plane store on %s', (engine) => {
  let under: EngineUnderTest | undefined;
  afterEach(async () => {
    await under?.dispose();
    under = undefined;
  });
  async function open(): Promise<{ db: SqlDatabase; store: ControlPlaneStore }> {
    under = await ENGINES[engine]();
    await migrate(under.db);
    return { db: under.db, store: createControlPlaneStore({ db: under.db, secrets: box }) };
  }

  it('creates a tenant and its entities, each with version 1, and bumps the tenant revision per write', async () => {
    const { store } = await open();
    const tenant = await store.createTenant(admin, 'acme', { document: { name: 'Acme' } });
    expect(tenant).toMatchObject({ id: 'acme', status: 'active', managedBy: 'api', version: 1, revision: 1 });
    const grant = await store.putEntity(admin, 'acme', 'grant', 'finance', {
      match: {},
      allow: [{ source: 'reports' }],
    });
    expect(grant).toMatchObject({ name: 'finance', version: 1, secretNames: [] });
    const updated = await store.putEntity(admin, 'acme', 'grant', 'finance', { match: { scopes: ['x'] }, allow: [] });
    expect(updated.version).toBe(2);
    expect((await store.revisions()).get('acme')).toBe(3);
    expect(await store.listEntities('acme', 'grant')).toEqual([updated]);
  });

  it('keeps source credentials write-only: sealed at rest, named but never returned, absent from the audit log', async () => {
    const { db, store } = await open();
    await store.createTenant(admin, 'acme', {});
    const source = await store.putEntity(admin, 'acme', 'source', 'reports', S3_DOCUMENT, { secrets: CREDENTIALS });
    expect(source.secretNames).toEqual(['accessKeyId', 'secretAccessKey']);
    expect(JSON.stringify(source)).not.toContain('canary');
    // A document-only update keeps the sealed credentials.
    await store.putEntity(admin, 'acme', 'source', 'reports', { ...S3_DOCUMENT, region: 'us-east-1' });
    expect(await store.openSourceSecrets('acme', 'reports')).toEqual(CREDENTIALS);
    const raw = await db.query<{ sealed_secrets: string }>('SELECT sealed_secrets FROM sources');
    expect(raw.rows[0]?.sealed_secrets).not.toContain('canary');
    const everything = await dumpAll(db);
    expect(everything).not.toContain('canary');
    expect(everything).not.toContain('AKIACANARY');
    expect(JSON.stringify(await store.auditEvents('acme'))).not.toContain('canary');
    await store.putEntity(admin, 'acme', 'source', 'reports', S3_DOCUMENT, { secrets: null });
    expect(await store.openSourceSecrets('acme', 'reports')).toEqual({});
  });

  it('audits who, from where, what, before and after, newest first, filterable and paged', async () => {
    const { store } = await open();
    await store.createTenant(admin, 'acme', {});
    await store.putEntity(admin, 'acme', 'grant', 'g1', { v: 1 });
    await store.putEntity(admin, 'acme', 'grant', 'g1', { v: 2 });
    await store.deleteEntity(admin, 'acme', 'grant', 'g1');
    const events = await store.auditEvents('acme');
    expect(events.map((e) => [e.action, e.targetType, e.targetId])).toEqual([
      ['delete', 'grant', 'g1'],
      ['update', 'grant', 'g1'],
      ['create', 'grant', 'g1'],
      ['create', 'tenant', 'acme'],
    ]);
    expect(events[1]).toMatchObject({
      actor: admin.actor,
      clientAddress: '192.0.2.7',
      before: { document: { v: 1 } },
      after: { document: { v: 2 } },
    });
    expect((await store.auditEvents('acme', { targetType: 'tenant' })).map((e) => e.targetType)).toEqual(['tenant']);
    const firstPage = await store.auditEvents('acme', { limit: 2 });
    const secondPage = await store.auditEvents('acme', { limit: 2, before: firstPage.at(-1)?.id });
    expect([...firstPage, ...secondPage]).toEqual(events);
  });

  it('refuses a stale version (412), a duplicate create (409) and a missing entity (404), changing nothing', async () => {
    const { db, store } = await open();
    await store.createTenant(admin, 'acme', {});
    await store.putEntity(admin, 'acme', 'grant', 'g1', { v: 1 });
    await store.putEntity(admin, 'acme', 'grant', 'g1', { v: 2 });
    const before = await dumpAll(db);
    expect((await errorOf(store.putEntity(admin, 'acme', 'grant', 'g1', { v: 3 }, { ifVersion: 1 }))).code).toBe(
      'precondition_failed',
    );
    expect((await errorOf(store.putEntity(admin, 'acme', 'grant', 'g1', { v: 3 }, { create: true }))).code).toBe(
      'conflict',
    );
    expect((await errorOf(store.createTenant(admin, 'acme', {}))).code).toBe('conflict');
    expect((await errorOf(store.deleteEntity(admin, 'acme', 'grant', 'nope'))).code).toBe('not_found');
    expect((await errorOf(store.putEntity(admin, 'nobody', 'grant', 'g1', {}))).code).toBe('not_found');
    expect((await errorOf(store.putEntity(admin, 'acme', 'grant', 'g2', {}, { secrets: { a: 'b' } }))).code).toBe(
      'conflict',
    );
    expect((await errorOf(store.deleteTenant(admin, 'acme', { ifVersion: 7 }))).code).toBe('precondition_failed');
    expect(await dumpAll(db)).toBe(before);
    expect((await store.putEntity(admin, 'acme', 'grant', 'g1', { v: 3 }, { ifVersion: 2 })).version).toBe(3);
  });

  it('deletes a tenant with everything it owns and keeps its audit trail', async () => {
    const { db, store } = await open();
    await store.createTenant(admin, 'acme', {});
    await store.putEntity(admin, 'acme', 'source', 's', S3_DOCUMENT, { secrets: CREDENTIALS });
    await store.putEntity(admin, 'acme', 'issuer', 'https://idp.acme.example', { issuer: 'https://idp.acme.example' });
    await store.deleteTenant(admin, 'acme');
    expect(await store.getTenant('acme')).toBeUndefined();
    expect((await db.query('SELECT 1 FROM sources UNION ALL SELECT 1 FROM issuers')).rows).toEqual([]);
    expect((await store.auditEvents('acme')).map((e) => e.action)).toEqual(['delete', 'create', 'create', 'create']);
  });

  it('suspends a tenant with an optimistic-concurrency check', async () => {
    const { store } = await open();
    const created = await store.createTenant(admin, 'acme', {});
    const suspended = await store.updateTenant(admin, 'acme', { status: 'suspended' }, { ifVersion: created.version });
    expect(suspended).toMatchObject({ status: 'suspended', version: 2 });
    expect((await errorOf(store.updateTenant(admin, 'acme', { status: 'active' }, { ifVersion: 1 }))).code).toBe(
      'precondition_failed',
    );
  });

  if (engine === 'postgres') {
    it('lets exactly one of two replicas writing with the same version win; the other gets precondition_failed', async () => {
      const { store } = await open();
      await store.createTenant(admin, 'acme', {});
      await store.putEntity(admin, 'acme', 'grant', 'g', { v: 0 });
      const replicas = [1, 2, 3, 4].map(() => createControlPlaneStore({ db: under!.connectAgain!(), secrets: box }));
      const outcomes = await Promise.allSettled(
        replicas.map((replica, i) => replica.putEntity(admin, 'acme', 'grant', 'g', { v: i + 1 }, { ifVersion: 1 })),
      );
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      for (const outcome of outcomes.filter((o) => o.status === 'rejected')) {
        expect((outcome as PromiseRejectedResult).reason).toMatchObject({ code: 'precondition_failed' });
      }
      expect((await store.getEntity('acme', 'grant', 'g'))?.version).toBe(2);
    });

    it('signals each committed change on the control-plane channel with the tenant id, and nothing for a refused one', async () => {
      const { store } = await open();
      const listener = new pg.Client({ connectionString: under!.url });
      const heard: string[] = [];
      listener.on('notification', (message) => {
        if (message.channel === CONTROL_PLANE_CHANNEL) heard.push(message.payload ?? '');
      });
      await listener.connect();
      try {
        await listener.query(`LISTEN ${CONTROL_PLANE_CHANNEL}`);
        await store.createTenant(admin, 'acme', {});
        await store.createTenant(admin, 'globex', {});
        await errorOf(store.putEntity(admin, 'acme', 'grant', 'g', {}, { ifVersion: 3 }));
        await store.putEntity(admin, 'globex', 'grant', 'g', {});
        // A round trip on the listening connection delivers every notification sent before it.
        await listener.query('SELECT 1');
        expect(heard).toEqual(['acme', 'globex', 'globex']);
      } finally {
        await listener.end();
      }
    });
  }
});

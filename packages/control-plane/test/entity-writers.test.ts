import { sealedCredentialKeys } from '@mcpgw/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { applyDeclaredState } from '../src/apply-declared-state.js';
import { createControlPlaneStore } from '../src/control-plane-store.js';
import { MIGRATIONS } from '../src/migrations/index.js';
import { migrate } from '../src/migrate.js';
import { createSecretBox } from '../src/secret-box.js';
import type { SqlDatabase } from '../src/sql-database.js';
import type { WriteContext } from '../src/write-context.js';
import { ENGINES, type EngineUnderTest } from './engines.js';

// Who last wrote an entity decides whether the egress policy holds its
// outbound connections (docs/configuration.md, "Egress policy").

vi.setConfig({ testTimeout: 60_000 });

const box = createSecretBox(sealedCredentialKeys([Buffer.from('a server secret of at least thirty-two characters')]));
const tenantAdmin: WriteContext = { actor: { kind: 'tenant-admin', subject: 'alice', issuer: 'https://idp.example' } };
const operator: WriteContext = { actor: { kind: 'operator', subject: 'olga', issuer: 'https://ops.example' } };
const bootstrap: WriteContext = { actor: { kind: 'bootstrap', subject: '/etc/gateway.yaml' } };
const S3 = { type: 's3', bucket: 'reports', endpoint: 'http://127.0.0.1:9000' };

describe.each(Object.keys(ENGINES) as (keyof typeof ENGINES)[])('entity writers on %s', (engine) => {
  let under: EngineUnderTest | undefined;
  afterEach(async () => {
    await under?.dispose();
    under = undefined;
  });
  const open = async (): Promise<SqlDatabase> => {
    under = await ENGINES[engine]();
    return under.db;
  };

  it('records the last writer: a tenant admin, or an operator (the bootstrap file is one)', async () => {
    const db = await open();
    await migrate(db);
    const store = createControlPlaneStore({ db, secrets: box });
    await store.createTenant(operator, 'acme', { document: { name: 'Acme' } });
    expect((await store.putEntity(tenantAdmin, 'acme', 'source', 's3', S3)).writtenBy).toBe('tenant-admin');
    expect((await store.getEntity('acme', 'source', 's3'))?.writtenBy).toBe('tenant-admin');
    expect((await store.putEntity(operator, 'acme', 'source', 's3', S3)).writtenBy).toBe('operator');
    expect((await store.putEntity(tenantAdmin, 'acme', 'source', 's3', S3)).writtenBy).toBe('tenant-admin');
    expect((await store.putEntity(bootstrap, 'acme', 'issuer', 'https://idp.example', {})).writtenBy).toBe('operator');
    expect((await store.listEntities('acme', 'issuer')).map((entity) => entity.writtenBy)).toEqual(['operator']);
  });

  it('the bootstrap file takes back an entry it declares that a tenant admin last wrote, even unchanged', async () => {
    const db = await open();
    await migrate(db);
    const store = createControlPlaneStore({ db, secrets: box });
    const declared = {
      id: 'acme',
      document: { name: 'Acme' },
      entities: { issuer: [], source: [{ name: 's3', document: S3 }], grant: [], 'admin-role-binding': [] },
    };
    await applyDeclaredState(store, [declared], bootstrap);
    await store.putEntity(tenantAdmin, 'acme', 'source', 's3', S3);
    expect((await applyDeclaredState(store, [declared], bootstrap)).changes).toEqual(['update source acme/s3']);
    expect((await store.getEntity('acme', 'source', 's3'))?.writtenBy).toBe('operator');
    // Applied again, nothing to take back: nothing written.
    expect((await applyDeclaredState(store, [declared], bootstrap)).changes).toEqual([]);
  });

  it('an upgrade gives existing rows the writer of their latest audited write', async () => {
    const db = await open();
    const step = MIGRATIONS.findIndex((migration) => migration.name === 'entity-writers');
    await migrate(db, MIGRATIONS.slice(0, step));
    const store = createControlPlaneStore({ db, secrets: box });
    await db.exec(`INSERT INTO tenants (id, document) VALUES ('acme', '{}')`);
    const rows: [string, string][] = [
      ['sources', 'by-admin'],
      ['sources', 'taken-back'],
      ['sources', 'unaudited'],
      ['issuers', 'https://idp.example'],
    ];
    for (const [table, name] of rows) {
      await db.query(`INSERT INTO ${table} (tenant_id, name, document) VALUES ('acme', $1, '{}')`, [name]);
    }
    const audit = async (context: WriteContext, action: string, type: string, id: string) =>
      db.query(
        `INSERT INTO audit_events (tenant_id, actor, action, target_type, target_id) VALUES ('acme', $1, $2, $3, $4)`,
        [JSON.stringify(context.actor), action, type, id],
      );
    await audit(operator, 'create', 'source', 'by-admin');
    await audit(tenantAdmin, 'update', 'source', 'by-admin');
    await audit(tenantAdmin, 'create', 'source', 'taken-back');
    await audit(bootstrap, 'update', 'source', 'taken-back');
    await audit(tenantAdmin, 'create', 'issuer', 'https://idp.example');
    // Another tenant's event about a same-named source says nothing about this one.
    await audit(tenantAdmin, 'create', 'source', 'unaudited');
    await db.exec(`UPDATE audit_events SET tenant_id = 'other' WHERE target_id = 'unaudited'`);
    await migrate(db);
    const writers = Object.fromEntries(
      (await store.listEntities('acme', 'source')).map((entity) => [entity.name, entity.writtenBy]),
    );
    expect(writers).toEqual({ 'by-admin': 'tenant-admin', 'taken-back': 'operator', unaudited: 'operator' });
    expect((await store.listEntities('acme', 'issuer')).map((entity) => entity.writtenBy)).toEqual(['tenant-admin']);
  });
});

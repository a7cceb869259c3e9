import { sealedCredentialKeys } from '@mcpgw/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AdminSessionRecord } from '../src/admin-session-rows.js';
import { createAdminSessionRows } from '../src/admin-session-rows.js';
import { createControlPlaneStore } from '../src/control-plane-store.js';
import { migrate } from '../src/migrate.js';
import { createSecretBox } from '../src/secret-box.js';
import type { WriteContext } from '../src/write-context.js';
import { ENGINES, type EngineUnderTest } from './engines.js';

// Admin sessions recorded in the control plane (migration 0005): a session
// lives while its row does, and the writes that take away what admitted it
// (its role binding, its tenant, the tenant's active status) end it in the
// same transaction, on both engines.

// PGlite starts a WebAssembly Postgres per test; on a loaded machine that takes seconds.
vi.setConfig({ testTimeout: 60_000 });

const operator: WriteContext = { actor: { kind: 'operator', subject: 'olga' } };
const box = createSecretBox(sealedCredentialKeys([Buffer.from('a server secret of at least thirty-two characters')]));
const session = (id: string, overrides: Partial<AdminSessionRecord> = {}): AdminSessionRecord => ({
  id,
  tenantId: 'acme',
  bindingName: 'admins',
  issuer: 'https://idp.acme.example',
  subject: 'alice',
  expiresAt: Date.now() + 600_000,
  ...overrides,
});

describe.each(Object.keys(ENGINES) as (keyof typeof ENGINES)[])('admin session records on %s', (engine) => {
  let under: EngineUnderTest | undefined;
  afterEach(async () => {
    await under?.dispose();
    under = undefined;
  });

  async function open() {
    under = await ENGINES[engine]();
    await migrate(under.db);
    const store = createControlPlaneStore({ db: under.db, secrets: box });
    for (const tenant of ['acme', 'globex']) {
      await store.createTenant(operator, tenant, { document: {} });
      await store.putEntity(operator, tenant, 'admin-role-binding', 'admins', { scopes: ['admin'] });
      await store.putEntity(operator, tenant, 'admin-role-binding', 'auditors', { groups: ['audit'] });
    }
    return { db: under.db, store, rows: createAdminSessionRows(under.db) };
  }

  it('records a session, keeps only a hash of its id, and ends it at sign-out', async () => {
    const { db, rows } = await open();
    expect(await rows.open(session('id-one'))).toBe(true);
    expect(await rows.isLive('id-one', 'acme')).toBe(true);
    // Another tenant's path, or a guessed id, finds nothing.
    expect(await rows.isLive('id-one', 'globex')).toBe(false);
    expect(await rows.isLive('id-two', 'acme')).toBe(false);
    const stored = JSON.stringify((await db.query('SELECT * FROM admin_sessions')).rows);
    expect(stored).not.toContain('id-one');
    expect(await rows.end('id-one')).toBe(true);
    expect(await rows.isLive('id-one', 'acme')).toBe(false);
    expect(await rows.end('id-one')).toBe(false);
  });

  it('refuses to record a session whose binding or tenant is gone, or whose tenant is suspended', async () => {
    const { store, rows } = await open();
    expect(await rows.open(session('a', { bindingName: 'no-such-binding' }))).toBe(false);
    expect(await rows.open(session('b', { tenantId: 'no-such-tenant' }))).toBe(false);
    await store.updateTenant(operator, 'globex', { status: 'suspended' });
    expect(await rows.open(session('c', { tenantId: 'globex' }))).toBe(false);
    for (const [id, tenant] of [
      ['a', 'acme'],
      ['b', 'no-such-tenant'],
      ['c', 'globex'],
    ] as const) {
      expect(await rows.isLive(id, tenant)).toBe(false);
    }
  });

  it('ends the sessions a role binding granted when it is deleted, and no other', async () => {
    const { store, rows } = await open();
    await rows.open(session('by-admins'));
    await rows.open(session('by-auditors', { bindingName: 'auditors' }));
    await rows.open(session('globex-admins', { tenantId: 'globex' }));
    // Changing the binding keeps its sessions (each request re-matches the person against it).
    await store.putEntity(operator, 'acme', 'admin-role-binding', 'admins', { scopes: ['admin', 'other'] });
    expect(await rows.isLive('by-admins', 'acme')).toBe(true);
    await store.deleteEntity(operator, 'acme', 'admin-role-binding', 'admins');
    expect(await rows.isLive('by-admins', 'acme')).toBe(false);
    expect(await rows.isLive('by-auditors', 'acme')).toBe(true);
    expect(await rows.isLive('globex-admins', 'globex')).toBe(true);
    // A binding of the same name added again does not bring the ended session back.
    await store.putEntity(operator, 'acme', 'admin-role-binding', 'admins', { scopes: ['admin'] });
    expect(await rows.isLive('by-admins', 'acme')).toBe(false);
  });

  it("ends a tenant's sessions when it is suspended (for good) or deleted", async () => {
    const { store, rows } = await open();
    await rows.open(session('acme-1'));
    await rows.open(session('globex-1', { tenantId: 'globex' }));
    await store.updateTenant(operator, 'acme', { status: 'suspended' });
    expect(await rows.isLive('acme-1', 'acme')).toBe(false);
    expect(await rows.isLive('globex-1', 'globex')).toBe(true);
    await store.updateTenant(operator, 'acme', { status: 'active' });
    expect(await rows.isLive('acme-1', 'acme')).toBe(false);
    await store.deleteTenant(operator, 'globex');
    expect(await rows.isLive('globex-1', 'globex')).toBe(false);
  });

  it('treats an expired session as ended and sweeps its row', async () => {
    const { rows } = await open();
    await rows.open(session('stale', { expiresAt: Date.now() - 1000 }));
    await rows.open(session('fresh'));
    expect(await rows.isLive('stale', 'acme')).toBe(false);
    expect(await rows.sweepExpired()).toBe(1);
    expect(await rows.isLive('fresh', 'acme')).toBe(true);
  });
});

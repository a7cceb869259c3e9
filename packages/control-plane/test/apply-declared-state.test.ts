import { sealedCredentialKeys } from '@mcpgw/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ControlPlaneStore } from '../src/control-plane-store.js';
import type { DeclaredTenant } from '../src/apply-declared-state.js';
import type { WriteContext } from '../src/write-context.js';
import { applyDeclaredState } from '../src/apply-declared-state.js';
import { createControlPlaneStore } from '../src/control-plane-store.js';
import { createSecretBox } from '../src/secret-box.js';
import { migrate } from '../src/migrate.js';
import { ENGINES, type EngineUnderTest } from './engines.js';

// PGlite starts a WebAssembly Postgres per test; on a loaded machine that takes seconds.
vi.setConfig({ testTimeout: 60_000 });

const box = createSecretBox(sealedCredentialKeys([Buffer.from('a server secret of at least thirty-two characters')]));
const file: WriteContext = { actor: { kind: 'bootstrap', subject: '/etc/gateway.yaml' } };
const admin: WriteContext = { actor: { kind: 'tenant-admin', subject: 'alice' }, clientAddress: '192.0.2.7' };

function acme(overrides: Partial<DeclaredTenant> = {}): DeclaredTenant {
  return {
    id: 'acme',
    document: { name: 'Acme', anonymous: false },
    entities: {
      issuer: [{ name: 'https://idp.acme.example', document: { issuer: 'https://idp.acme.example', discovery: true } }],
      source: [{ name: 'docs', document: { type: 'files', root: './docs', secret: { $env: 'DOCS_TOKEN' } } }],
      grant: [{ name: 'everyone', document: { match: {}, allow: [{ source: 'docs' }] } }],
      'admin-role-binding': [],
    },
    ...overrides,
  };
}

describe.each(Object.keys(ENGINES) as (keyof typeof ENGINES)[])('applying the bootstrap state on %s', (engine) => {
  let under: EngineUnderTest | undefined;
  afterEach(async () => {
    await under?.dispose();
    under = undefined;
  });
  async function open(): Promise<ControlPlaneStore> {
    under = await ENGINES[engine]();
    await migrate(under.db);
    return createControlPlaneStore({ db: under.db, secrets: box });
  }

  it('creates what is declared, marks the tenant as file-managed, and changes nothing when applied again', async () => {
    const store = await open();
    const first = await applyDeclaredState(store, [acme()], file);
    expect(first.changes).toEqual([
      'create tenant acme',
      'create issuer acme/https://idp.acme.example',
      'create source acme/docs',
      'create grant acme/everyone',
    ]);
    expect((await store.getTenant('acme'))?.managedBy).toBe('bootstrap');
    const revision = (await store.revisions()).get('acme');
    const audit = await store.auditEvents('acme');
    // Same content, other key order: still nothing to do.
    const reordered = acme({ document: { anonymous: false, name: 'Acme' } });
    expect((await applyDeclaredState(store, [reordered], file)).changes).toEqual([]);
    expect((await store.revisions()).get('acme')).toBe(revision);
    expect(await store.auditEvents('acme')).toEqual(audit);
  });

  it('lets the file win for what it declares and keeps what it does not mention', async () => {
    const store = await open();
    await applyDeclaredState(store, [acme()], file);
    await store.putEntity(admin, 'acme', 'grant', 'everyone', { match: { scopes: ['x'] }, allow: [] });
    await store.putEntity(admin, 'acme', 'grant', 'from-the-api', { match: {}, allow: [] });
    const report = await applyDeclaredState(store, [acme()], file);
    expect(report.changes).toEqual(['update grant acme/everyone']);
    expect((await store.getEntity('acme', 'grant', 'everyone'))?.document).toEqual(acme().entities.grant[0]?.document);
    expect(await store.getEntity('acme', 'grant', 'from-the-api')).toBeDefined();
  });

  it('deletes what it does not mention only when the declaration says prune', async () => {
    const store = await open();
    await applyDeclaredState(store, [acme()], file);
    await store.putEntity(admin, 'acme', 'grant', 'from-the-api', { match: {}, allow: [] });
    const report = await applyDeclaredState(store, [acme({ prune: true })], file);
    expect(report.changes).toEqual(['delete grant acme/from-the-api']);
    expect((await store.listEntities('acme', 'grant')).map((g) => g.name)).toEqual(['everyone']);
  });

  it('applies each tenant in one transaction: a write that fails leaves that tenant as it was', async () => {
    const store = await open();
    // jsonb refuses the NUL character, so the grant's write fails after the tenant, issuer and source were written.
    const broken = acme({
      entities: { ...acme().entities, grant: [{ name: 'everyone', document: { match: {}, note: 'a\u0000b' } }] },
    });
    await expect(applyDeclaredState(store, [broken], file)).rejects.toThrow();
    expect(await store.getTenant('acme')).toBeUndefined();
    expect(await store.listEntities('acme', 'source')).toEqual([]);
    expect(await store.auditEvents('acme')).toEqual([]);
    // A tenant that exists already keeps what it held: the update of its settings rolls back with the grant.
    await applyDeclaredState(store, [acme()], file);
    const before = await store.getTenant('acme');
    const changed = { ...broken, document: { name: 'Acme renamed', anonymous: false } };
    await expect(applyDeclaredState(store, [changed], file)).rejects.toThrow();
    expect(await store.getTenant('acme')).toEqual(before);
    expect((await store.listEntities('acme', 'grant')).map((grant) => grant.document)).toEqual([
      { match: {}, allow: [{ source: 'docs' }] },
    ]);
  });
});

import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '@mcpgw/config';
import type { SourceFactory, StandardSchemaV1 } from '@mcpgw/core';
import { sealedCredentialKeys } from '@mcpgw/core';
import { checkEntityBody, importEntity, type EntityWriteInput } from '../src/admin-import.js';
import { applyDeclaredState } from '../src/apply-declared-state.js';
import { declaredTenantFromEntry } from '../src/bootstrap-import.js';
import { createControlPlaneStore, type ControlPlaneStore, type Document } from '../src/control-plane-store.js';
import { AUTHORIZATION_SERVER_NAME } from '../src/entity-rows.js';
import { migrate } from '../src/migrate.js';
import { createSecretBox } from '../src/secret-box.js';
import { servedTenantEntry } from '../src/served-tenant.js';
import { readStoredTenant } from '../src/stored-tenant.js';
import { fieldRule, operatorFieldSet } from '../src/tenant-model.js';
import { checkTenantWrite } from '../src/tenant-write-check.js';
import { TenantWriteRefusal } from '../src/tenant-write-refusal.js';
import type { WriteContext } from '../src/write-context.js';
import { ENGINES, type EngineUnderTest } from './engines.js';

// The tenant model of a tenant's hosted authorization server, on the embedded
// engine: the bootstrap file's `authorizationServer` (its client secret an
// `$env` reference) stored and served as written; a tenant admin's write
// sealing the secret apart, keeping it (sealed or the file's reference) when
// omitted, and only while it is sent where it was written for.
vi.setConfig({ testTimeout: 60_000 });

const anyOptions: StandardSchemaV1<unknown, unknown> = {
  '~standard': { version: 1, vendor: 'test', validate: (value: unknown) => ({ value }) },
};
const sourceFactories = new Map<string, SourceFactory>([
  [
    'notes',
    {
      type: 'notes',
      optionsSchema: anyOptions,
      model: { credentials: [], targets: [], operatorOnly: false },
      create: () => {
        throw new Error('never opened here');
      },
    },
  ],
]);
const box = createSecretBox(sealedCredentialKeys([Buffer.from('an authorization server model test key of 32+ chars')]));
const bootstrap: WriteContext = { actor: { kind: 'bootstrap', subject: 'gateway.json' } };
const tenantAdmin: WriteContext = { actor: { kind: 'tenant-admin', subject: 'ada', issuer: 'https://idp.example' } };
const UPSTREAM = 'https://login.example.com/acme/v2.0';

const ACME: Document = {
  id: 'acme',
  grants: [{ name: 'readers', match: { scopes: ['mcp:read'] }, allow: [{ source: 'notes' }] }],
  sources: [{ id: 'notes', type: 'notes' }],
  authorizationServer: {
    upstream: { issuer: UPSTREAM, clientId: 'gateway', clientSecret: { $env: 'ACME_UPSTREAM_SECRET' } },
    scopes: ['mcp:read'],
  },
};

const refusal = (work: () => Promise<unknown>): Promise<TenantWriteRefusal> =>
  work().then(
    () => {
      throw new Error('the write was accepted');
    },
    (error: unknown) => {
      if (!(error instanceof TenantWriteRefusal)) throw error;
      return error;
    },
  );

describe('the tenant model of the hosted authorization server', () => {
  let under: EngineUnderTest[] = [];
  afterEach(async () => {
    await Promise.all(under.map((engine) => engine.dispose()));
    under = [];
  });
  async function open(): Promise<ControlPlaneStore> {
    const opened = await ENGINES.pglite();
    under.push(opened);
    await migrate(opened.db);
    return createControlPlaneStore({ db: opened.db, secrets: box });
  }
  const config = () =>
    loadConfig({
      registry: sourceFactories,
      defaultBootstrap: { document: { tenants: [ACME] }, configDir: '/srv' },
      env: { PORT: '8080', HOST: '127.0.0.1', ACME_UPSTREAM_SECRET: 'from-the-environment' },
    });

  it('gives the settings to tenant admins, the demo login to operators, and the client secret as a credential', () => {
    expect(fieldRule('authorization-server', 'claims', {}, undefined)).toMatchObject({ setBy: 'tenant-admin' });
    expect(fieldRule('authorization-server', 'upstream', {}, undefined)).toMatchObject({ setBy: 'tenant-admin' });
    expect(fieldRule('authorization-server', 'upstream.clientSecret', {}, undefined)).toMatchObject({
      setBy: 'tenant-admin',
      credential: true,
    });
    expect(
      operatorFieldSet('tenant-admin', 'authorization-server', { upstream: { demo: true } }, undefined),
    ).toMatchObject({ path: 'upstream.demo', rule: { setBy: 'operator' } });
    expect(
      operatorFieldSet('operator', 'authorization-server', { upstream: { demo: true } }, undefined),
    ).toBeUndefined();
  });

  it("stores the bootstrap file's settings as written and serves them with the secret from the environment", async () => {
    const gateway = await config();
    const store = await open();
    const report = await applyDeclaredState(store, [declaredTenantFromEntry(ACME)], bootstrap);
    expect(report.changes).toContain('create authorization-server acme/default');
    const stored = await readStoredTenant(store, 'acme');
    expect(stored?.authorizationServer).toMatchObject({
      name: AUTHORIZATION_SERVER_NAME,
      writtenBy: 'operator',
      document: { upstream: { clientSecret: { $env: 'ACME_UPSTREAM_SECRET' } } },
      secrets: {},
    });
    const served = await gateway.validateTenant(servedTenantEntry(stored!, sourceFactories), 'control plane');
    expect(served.authorizationServer?.upstream).toMatchObject({ clientSecret: 'from-the-environment' });
    // Applied again, nothing is written.
    expect((await applyDeclaredState(store, [declaredTenantFromEntry(ACME)], bootstrap)).changes).toEqual([]);
  });

  it("keeps the file's reference or the sealed secret when a tenant admin's write omits it, only for the same upstream", async () => {
    const gateway = await config();
    const store = await open();
    await applyDeclaredState(store, [declaredTenantFromEntry(ACME)], bootstrap);
    const write = async (body: Document) => {
      const input: EntityWriteInput = {
        tenantId: 'acme',
        kind: 'authorization-server',
        name: AUTHORIZATION_SERVER_NAME,
        body,
        writer: 'tenant-admin',
      };
      checkEntityBody(input);
      const current = await store.getEntity('acme', 'authorization-server', AUTHORIZATION_SERVER_NAME);
      return store.putEntity(tenantAdmin, 'acme', 'authorization-server', AUTHORIZATION_SERVER_NAME, body, {
        ifVersion: current!.version,
        prepare: (reads, replaced) => importEntity({ sourceFactories, reads }, input, replaced),
        check: (reads) =>
          checkTenantWrite({ sourceFactories, validateTenant: gateway.validateTenant }, reads, 'acme', {
            kind: 'authorization-server',
            name: AUTHORIZATION_SERVER_NAME,
          }),
      });
    };
    const servedSecret = async () => {
      const stored = await readStoredTenant(store, 'acme');
      const served = await gateway.validateTenant(servedTenantEntry(stored!, sourceFactories), 'control plane');
      return (served.authorizationServer?.upstream as { clientSecret?: string }).clientSecret;
    };
    // The operator's reference, kept through a tenant admin's write that omits it.
    const kept = await write({ upstream: { issuer: UPSTREAM, clientId: 'gateway' }, scopes: ['mcp:read'] });
    expect(kept).toMatchObject({ writtenBy: 'tenant-admin', secretNames: [] });
    expect(await servedSecret()).toBe('from-the-environment');
    // Never sent to another upstream without being written again.
    const moved = await refusal(() =>
      write({ upstream: { issuer: 'https://elsewhere.example', clientId: 'gateway' } }),
    );
    expect(moved.errors.map((error) => error.pointer)).toEqual(['/upstream/issuer']);
    // A secret the tenant admin writes is sealed apart; omitted later, the sealed one is served.
    const sealed = await write({ upstream: { issuer: UPSTREAM, clientId: 'gateway', clientSecret: 'typed-in' } });
    expect(sealed.secretNames).toEqual(['upstream.clientSecret']);
    expect(JSON.stringify(sealed.document)).not.toContain('typed-in');
    await write({ upstream: { issuer: UPSTREAM, clientId: 'gateway' }, tokens: { accessTokenSeconds: 300 } });
    expect(await servedSecret()).toBe('typed-in');
    // The audit trail names the credential, never its value.
    const events = await store.auditEvents('acme', { targetType: 'authorization-server' });
    expect(events.length).toBe(4);
    expect(JSON.stringify(events)).not.toContain('typed-in');
    expect(JSON.stringify(events)).not.toContain('from-the-environment');
  });

  it('seals the secret bound to its tenant and kind: moved onto a source, it does not open', async () => {
    const store = await open();
    await applyDeclaredState(store, [declaredTenantFromEntry({ ...ACME, authorizationServer: undefined })], bootstrap);
    await store.putEntity(
      bootstrap,
      'acme',
      'authorization-server',
      AUTHORIZATION_SERVER_NAME,
      { upstream: { issuer: UPSTREAM, clientId: 'c' } },
      {
        create: true,
        secrets: { 'upstream.clientSecret': 'bound' },
      },
    );
    await expect(store.openAuthorizationServerSecrets('acme')).resolves.toEqual({ 'upstream.clientSecret': 'bound' });
    const db = under[0]!.db;
    await db.query(
      `UPDATE sources SET sealed_secrets = (SELECT sealed_secrets FROM authorization_servers WHERE tenant_id = 'acme') WHERE tenant_id = 'acme'`,
    );
    await expect(store.openSourceSecrets('acme', 'notes')).rejects.toThrow();
  });
});

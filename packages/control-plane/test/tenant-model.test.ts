import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, loadConfig, type GatewayConfig } from '@mcpgw/config';
import type { SourceFactory, SourceModel, StandardSchemaV1 } from '@mcpgw/core';
import { sealedCredentialKeys } from '@mcpgw/core';
import { checkEntityBody, importEntity, importSettings, type EntityWriteInput } from '../src/admin-import.js';
import { applyDeclaredState } from '../src/apply-declared-state.js';
import { declaredTenantFromEntry, storedTenantOfDeclared } from '../src/bootstrap-import.js';
import { createControlPlaneStore, type ControlPlaneStore, type Document } from '../src/control-plane-store.js';
import { migrate } from '../src/migrate.js';
import { createSecretBox } from '../src/secret-box.js';
import { servedTenantEntry } from '../src/served-tenant.js';
import { readStoredTenant, type StoredTenantModel } from '../src/stored-tenant.js';
import { fieldRule, fieldsSet, operatorFieldSet } from '../src/tenant-model.js';
import { checkTenantWrite } from '../src/tenant-write-check.js';
import { TenantWriteRefusal } from '../src/tenant-write-refusal.js';
import type { WriteContext } from '../src/write-context.js';
import { ENGINES, type EngineUnderTest } from './engines.js';

// PGlite starts a WebAssembly Postgres per test; on a loaded machine that takes seconds.
vi.setConfig({ testTimeout: 60_000 });

/** Accepts any options: the model's rules, not a type's schema, are under test. */
const anyOptions: StandardSchemaV1<unknown, unknown> = {
  '~standard': { version: 1, vendor: 'test', validate: (value: unknown) => ({ value }) },
};

const factory = (type: string, model: SourceModel): SourceFactory => ({
  type,
  optionsSchema: anyOptions,
  create: () => {
    throw new Error('never opened here');
  },
  model,
});

/** A type a tenant admin may configure, with a credential bound to where it is sent. */
const VAULT: SourceModel = { credentials: ['credentials.token'], targets: ['endpoint'], operatorOnly: false };
const sourceFactories = new Map<string, SourceFactory>([
  ['notes', factory('notes', { credentials: [], targets: [], operatorOnly: false })],
  ['vault', factory('vault', VAULT)],
  ['host-files', factory('host-files', { credentials: [], targets: [], operatorOnly: true })],
]);

async function gatewayConfig(): Promise<GatewayConfig> {
  return loadConfig({
    registry: sourceFactories,
    defaultBootstrap: {
      document: { tenants: [{ id: 'seed', anonymous: true, sources: [{ id: 'a', type: 'notes' }] }] },
      configDir: '/srv/gateway',
    },
    env: { PORT: '8080', HOST: '127.0.0.1' },
  });
}

const refusal = (work: () => unknown): Promise<TenantWriteRefusal> =>
  Promise.resolve()
    .then(work)
    .then(
      () => {
        throw new Error('the write was accepted');
      },
      (error: unknown) => {
        if (!(error instanceof TenantWriteRefusal)) throw error;
        return error;
      },
    );

const noReads = {
  getTenant: () => Promise.resolve(undefined),
  listEntities: () => Promise.resolve([]),
  getEntity: () => Promise.resolve(undefined),
  openSourceSecrets: () => Promise.resolve({}),
  openAuthorizationServerSecrets: () => Promise.resolve({}),
};

describe('the tenant model: who may set each field, and which are credentials', () => {
  it("gives every setting to operators, entities' fields to tenant admins, and credentials by the source type's model", () => {
    for (const setting of ['name', 'anonymous', 'auth', 'limits', 'adminSignIn', 'auth.requiredScopes']) {
      expect(fieldRule('settings', setting, {}, undefined)).toMatchObject({ setBy: 'operator', credential: false });
    }
    expect(fieldRule('issuer', 'development', { development: true }, undefined).setBy).toBe('operator');
    expect(fieldRule('issuer', 'issuer', { issuer: 'https://idp.example' }, undefined).setBy).toBe('tenant-admin');
    expect(fieldRule('grant', 'allow', {}, undefined)).toEqual({ setBy: 'tenant-admin', credential: false });
    expect(fieldRule('admin-role-binding', 'scopes', {}, undefined).setBy).toBe('tenant-admin');
    expect(fieldRule('source', 'credentials.token', { type: 'vault' }, VAULT)).toEqual({
      setBy: 'tenant-admin',
      credential: true,
    });
    expect(fieldRule('source', 'endpoint', { type: 'vault' }, VAULT).credential).toBe(false);
    const hostFiles = sourceFactories.get('host-files')?.model;
    expect(fieldRule('source', 'type', { type: 'host-files' }, hostFiles).setBy).toBe('operator');
    expect(fieldsSet('source', { type: 'vault', credentials: { token: 't' } }, VAULT)).toContainEqual({
      path: 'credentials.token',
      rule: { setBy: 'tenant-admin', credential: true },
    });
    // An operator may set every field; a tenant admin none of an operator's.
    expect(operatorFieldSet('operator', 'settings', { name: 'Acme' }, undefined)).toBeUndefined();
    expect(operatorFieldSet('tenant-admin', 'settings', { name: 'Acme' }, undefined)?.path).toBe('name');
  });

  it("refuses a tenant admin every operator's field, through every API importer", async () => {
    const settings = await refusal(() => importSettings({ name: 'Renamed' }, 'tenant-admin'));
    expect(settings.type).toBe('forbidden');
    expect(importSettings({ name: 'Renamed' }, 'operator')).toEqual({ name: 'Renamed' });

    const input = (kind: EntityWriteInput['kind'], name: string, body: Document): EntityWriteInput => ({
      tenantId: 'acme',
      kind,
      name,
      body,
      writer: 'tenant-admin',
    });
    const development = await refusal(() => checkEntityBody(input('issuer', 'development', { development: true })));
    expect(development).toMatchObject({
      type: 'forbidden',
      detail: 'Only platform operators may trust the development issuer',
    });
    const operatorType = await refusal(() =>
      importEntity({ sourceFactories, reads: noReads }, input('source', 'disk', { type: 'host-files' }), undefined),
    );
    expect(operatorType).toMatchObject({
      type: 'forbidden',
      detail: 'Only platform operators may configure "host-files" sources',
    });
    // The same writes by an operator are accepted.
    const asOperator = { ...input('source', 'disk', { type: 'host-files' }), writer: 'operator' as const };
    await expect(importEntity({ sourceFactories, reads: noReads }, asOperator, undefined)).resolves.toEqual({
      document: { type: 'host-files' },
      secrets: undefined,
    });
  });

  it('takes the bootstrap file as an operator: every part it stores is written by an operator', () => {
    const declared = declaredTenantFromEntry({
      id: 'acme',
      auth: { issuers: [{ development: true }] },
      sources: [{ id: 'disk', type: 'host-files' }],
    });
    const stored = storedTenantOfDeclared(declared);
    expect([...stored.issuers, ...stored.sources].map((part) => part.writtenBy)).toEqual(['operator', 'operator']);
  });

  it('takes credentials only under "secrets", and only at the credential paths of the type', async () => {
    const write = (body: Document) =>
      importEntity(
        { sourceFactories, reads: noReads },
        { tenantId: 'acme', kind: 'source', name: 'vault', body, writer: 'tenant-admin' },
        undefined,
      );
    const inOptions = await refusal(() =>
      write({ type: 'vault', endpoint: 'https://vault.example', credentials: { token: 'in clear' } }),
    );
    expect(inOptions.type).toBe('validation-failed');
    expect(inOptions.errors.map((error) => error.pointer)).toEqual(['/credentials/token']);
    const notACredential = await refusal(() =>
      write({ type: 'vault', endpoint: 'https://vault.example', secrets: { endpoint: 'x' } }),
    );
    expect(notACredential.errors).toEqual([
      {
        pointer: '/secrets/endpoint',
        detail: 'not a credential: the credentials of a "vault" source are "credentials.token"',
      },
    ]);
    await expect(
      write({ type: 'vault', endpoint: 'https://vault.example', secrets: { 'credentials.token': 'sealed' } }),
    ).resolves.toEqual({
      document: { type: 'vault', endpoint: 'https://vault.example' },
      secrets: { 'credentials.token': 'sealed' },
    });
  });
});

const box = createSecretBox(sealedCredentialKeys([Buffer.from('a server secret of at least thirty-two characters')]));
const bootstrap: WriteContext = { actor: { kind: 'bootstrap', subject: '/etc/gateway.yaml' } };
const operator: WriteContext = { actor: { kind: 'operator', subject: 'ops' }, clientAddress: '192.0.2.1' };

/** One tenant in the bootstrap file's shape, with no credential (the file names those by `$env`). */
const ACME = {
  id: 'acme',
  name: 'Acme',
  auth: { issuers: [{ issuer: 'https://idp.acme.example', jwks: { keys: [{ kty: 'EC' }] } }], requiredScopes: ['mcp'] },
  sources: [
    { id: 'notes', type: 'notes', resources: [] },
    { id: 'vault', type: 'vault', endpoint: 'https://vault.example' },
  ],
  grants: [{ name: 'everyone', match: {}, allow: [{ source: 'notes' }] }],
  adminRoleBindings: [{ name: 'admins', scopes: ['mcpgw:admin'] }],
};

describe.each(Object.keys(ENGINES) as (keyof typeof ENGINES)[])('the tenant model on %s', (engine) => {
  let under: EngineUnderTest[] = [];
  afterEach(async () => {
    await Promise.all(under.map((engineUnderTest) => engineUnderTest.dispose()));
    under = [];
  });
  async function open(): Promise<ControlPlaneStore> {
    const opened = await ENGINES[engine]();
    under.push(opened);
    await migrate(opened.db);
    return createControlPlaneStore({ db: opened.db, secrets: box });
  }

  /** Writes a tenant in the file's shape as the admin API does: its settings, then each entity, each checked. */
  async function writeThroughApi(store: ControlPlaneStore, config: GatewayConfig, entry: Document): Promise<void> {
    const declared = declaredTenantFromEntry(entry);
    const context = { sourceFactories, validateTenant: config.validateTenant };
    await store.createTenant(
      operator,
      declared.id,
      { document: importSettings(declared.document, 'operator') },
      { check: (reads) => checkTenantWrite(context, reads, declared.id, { kind: 'settings' }) },
    );
    for (const kind of ['issuer', 'source', 'grant', 'admin-role-binding'] as const) {
      for (const { name, document } of declared.entities[kind]) {
        const input = { tenantId: declared.id, kind, name, body: document, writer: 'operator' as const };
        checkEntityBody(input);
        await store.putEntity(operator, declared.id, kind, name, document, {
          create: true,
          prepare: (reads, current) => importEntity({ sourceFactories, reads }, input, current),
          check: (reads) => checkTenantWrite(context, reads, declared.id, { kind, name }),
        });
      }
    }
  }

  const withoutCounters = ({ revision: _revision, ...tenant }: StoredTenantModel) => tenant;

  it('stores the same tenant from the bootstrap importer and from the API importer, and serves it the same', async () => {
    const config = await gatewayConfig();
    const fromFile = await open();
    const fromApi = await open();
    await applyDeclaredState(fromFile, [declaredTenantFromEntry(ACME)], bootstrap);
    await writeThroughApi(fromApi, config, ACME);
    const a = await readStoredTenant(fromFile, 'acme');
    const b = await readStoredTenant(fromApi, 'acme');
    if (a === undefined || b === undefined) throw new Error('the tenant was not stored');
    expect(withoutCounters(b)).toEqual(withoutCounters(a));
    expect(servedTenantEntry(b, sourceFactories)).toEqual(servedTenantEntry(a, sourceFactories));
    // What is served validates by the file's rules, to the same runtime configuration as the file's.
    const served = await config.validateTenant(servedTenantEntry(a, sourceFactories), 'control plane');
    expect(served).toMatchObject({ id: 'acme', name: 'Acme', sources: [{ id: 'notes' }, { id: 'vault' }] });
  });

  it('holds a tenant being set up (no source, no issuer) valid in the model itself, with nothing made up', async () => {
    const config = await gatewayConfig();
    const store = await open();
    const context = { sourceFactories, validateTenant: config.validateTenant };
    await store.createTenant(
      operator,
      'fresh',
      { document: { name: 'Fresh' } },
      { check: (reads) => checkTenantWrite(context, reads, 'fresh', { kind: 'settings' }) },
    );
    const fresh = await readStoredTenant(store, 'fresh');
    if (fresh === undefined) throw new Error('the tenant was not stored');
    const entry = servedTenantEntry(fresh, sourceFactories);
    expect(entry).toEqual({ name: 'Fresh', id: 'fresh', grants: [], sources: [], adminRoleBindings: [] });
    await expect(config.validateTenant(entry, 'admin API', 'being-set-up')).resolves.toMatchObject({
      id: 'fresh',
      sources: [],
      auth: undefined,
    });
    // It is not served until it is complete.
    await expect(config.validateTenant(entry, 'control plane')).rejects.toBeInstanceOf(ConfigError);

    // A grant naming a source it does not have yet is refused, saying it has none (no stand-in named).
    const grant = { match: {}, allow: [{ source: 'missing' }] };
    const refused = await refusal(() =>
      store.putEntity(operator, 'fresh', 'grant', 'everyone', grant, {
        create: true,
        check: (reads) => checkTenantWrite(context, reads, 'fresh', { kind: 'grant', name: 'everyone' }),
      }),
    );
    expect(refused.errors).toEqual([
      { pointer: '/allow/0/source', detail: "no source 'missing' in this tenant; sources: (none)" },
    ]);
    // Refused inside the write's transaction: nothing of it was stored, the revision did not move.
    expect(await store.listEntities('fresh', 'grant')).toEqual([]);
    expect((await store.getTenant('fresh'))?.revision).toBe(fresh.revision);
  });
});

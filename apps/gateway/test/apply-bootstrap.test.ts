import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SqlDatabase } from '@mcpgw/control-plane';
import { loadConfig } from '@mcpgw/config';
import { silentLogger } from '@mcpgw/core';
import { createTestDatabase, type TestDatabase } from '@mcpgw/test-helpers/postgres';
import { applyBootstrap, openControlPlane } from '@mcpgw/tenancy';
import { demoBootstrap } from '../src/demo.js';
import { createSourceRegistry } from '../src/source-registry.js';

// The bootstrap file as the gateway applies it at start and on SIGHUP: a
// second application, after a restart on the same store, finds nothing to
// do and writes nothing (no revision, no audit event, no row touched), on the
// embedded PGlite on disk and on Postgres.

// PGlite starts a WebAssembly Postgres per open; on a loaded machine that takes seconds.
vi.setConfig({ testTimeout: 90_000 });

const BOOTSTRAP = {
  tenants: [
    {
      id: 'acme',
      name: 'Acme',
      auth: {
        issuers: [
          { issuer: 'https://idp.acme.example', jwksUri: 'https://idp.acme.example/jwks', groupsClaim: 'groups' },
        ],
        requiredScopes: ['mcp:read'],
      },
      grants: [
        { name: 'readers', match: { scopes: ['mcp:read'] }, allow: [{ source: 'docs' }] },
        {
          name: 'finance',
          match: { groups: ['finance'] },
          allow: [{ source: 'ledger', uris: ['db+postgres:///ledger/public/*'] }],
        },
      ],
      sources: [
        { id: 'docs', type: 'files', root: '.' },
        { id: 'ledger', type: 'postgres', connection: { url: { $env: 'LEDGER_URL' } }, schemas: ['public'] },
      ],
    },
    {
      id: 'globex',
      auth: { issuers: [{ issuer: 'https://login.globex.example', discovery: true }] },
      grants: [{ name: 'everyone', match: {}, allow: [{ source: 'plans' }] }],
      sources: [{ id: 'plans', type: 'static', resources: [{ uri: 'test://plan', name: 'plan', text: 'x' }] }],
    },
  ],
};

/** Every row of every control-plane table, timestamps included: "changes nothing" means byte for byte. */
async function dump(db: SqlDatabase): Promise<string> {
  const tables = ['tenants', 'issuers', 'sources', 'grants', 'admin_role_bindings', 'audit_events'];
  const parts = [];
  for (const table of tables) parts.push((await db.query(`SELECT * FROM ${table} ORDER BY 1, 2`)).rows);
  return JSON.stringify(parts);
}

describe.each(['pglite', 'postgres'] as const)('the bootstrap file applied twice on %s', (engine) => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('changes nothing the second time, after a restart on the same store', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gw-bootstrap-twice-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, 'gateway.json'), JSON.stringify(BOOTSTRAP));
    let database: TestDatabase | undefined;
    if (engine === 'postgres') {
      database = await createTestDatabase('bootstrap_twice');
      cleanups.push(() => database!.drop());
    }
    const config = await loadConfig({
      registry: createSourceRegistry(),
      defaultBootstrap: demoBootstrap(),
      env: {
        GATEWAY_CONFIG: join(dir, 'gateway.json'),
        DATA_DIR: join(dir, 'data'),
        SECRETS_KEY: 'a server secret of at least thirty-two characters',
        LEDGER_URL: 'postgres://reader:canary-ledger-password@127.0.0.1:5432/ledger',
        ...(database === undefined ? {} : { DATABASE_URL: database.url }),
      },
    });

    const first = await openControlPlane(config.env, silentLogger);
    const report = await applyBootstrap(first.store, config);
    expect(report.changes).toContain('create tenant acme');
    expect(report.changes).toContain('create source acme/ledger');
    const afterFirst = await dump(first.db);
    // The $env reference is stored as a reference: the credential itself never reaches the store.
    expect(afterFirst).not.toContain('canary-ledger-password');
    await first.close();

    const second = await openControlPlane(config.env, silentLogger);
    cleanups.push(() => second.close());
    expect((await applyBootstrap(second.store, config)).changes).toEqual([]);
    expect(await dump(second.db)).toBe(afterFirst);
    expect((await second.store.getTenant('acme'))?.managedBy).toBe('bootstrap');
  });
});

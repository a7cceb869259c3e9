import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sealedCredentialKeys } from '@mcpgw/core';
import { readEnv } from '@mcpgw/config';
import {
  createControlPlaneStore,
  createPgliteDatabase,
  createPostgresDatabase,
  createSecretBox,
  migrate,
  type WriteContext,
} from '@mcpgw/control-plane';
import { createTestDatabase, type TestDatabase } from '@mcpgw/test-helpers/postgres';
import { runControlPlaneCli } from '../src/control-plane-cli.js';

// The documented move of an embedded installation to Postgres, with the command an operator
// runs: an embedded store that ran without SECRETS_KEY (its key in DATA_DIR/control-plane.key)
// is exported, then imported into a new Postgres database under a SECRETS_KEY, its sealed
// credentials sealed again on the way. PGlite starts slowly on a loaded machine.
vi.setConfig({ testTimeout: 120_000 });

const SECRETS_KEY = 'the production secrets key, at least 32 characters';
const admin: WriteContext = { actor: { kind: 'operator', subject: 'ops', issuer: 'https://ops.example' } };

let dataDir: string | undefined;
let database: TestDatabase | undefined;
afterEach(async () => {
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  await database?.drop();
  dataDir = undefined;
  database = undefined;
});

function cli(argv: string[], env: Record<string, string>) {
  const out: string[] = [];
  const err: string[] = [];
  const run = runControlPlaneCli(argv, {
    env: readEnv(env),
    out: (text) => out.push(text),
    err: (text) => err.push(text),
  });
  return run.then((code) => ({ code, out: out.join(''), err: err.join('') }));
}

describe('npm run control-plane', () => {
  it('moves an embedded store to Postgres: export, then import with the embedded key file', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gw-cp-cli-'));
    const localKey = randomBytes(32);
    await writeFile(join(dataDir, 'control-plane.key'), localKey.toString('base64url'));
    const embedded = await createPgliteDatabase({ dataDir: join(dataDir, 'control-plane') });
    await migrate(embedded);
    const before = createControlPlaneStore({
      db: embedded,
      secrets: createSecretBox(sealedCredentialKeys([localKey])),
    });
    await before.createTenant(admin, 'acme', { document: { name: 'Acme' } });
    await before.putEntity(
      admin,
      'acme',
      'source',
      'warehouse',
      { type: 'postgres', connection: { host: 'db.internal', database: 'warehouse', user: 'reader' } },
      { secrets: { 'connection.password': 'canary-password' } },
    );
    await embedded.close();

    const archivePath = join(dataDir, 'archive.json');
    const exported = await cli(['export', '--out', archivePath], { DATA_DIR: dataDir });
    expect(exported).toMatchObject({ code: 0, out: '' });
    expect(exported.err).toMatch(/exported the embedded store .* tenants 1/);
    expect(await readFile(archivePath, 'utf8')).not.toContain('canary-password');

    database = await createTestDatabase('cp_cli');
    const target = { DATABASE_URL: database.url, SECRETS_KEY, DATA_DIR: dataDir };
    // Without the embedded key the credentials cannot be carried over: refused, nothing written.
    const refused = await cli(['import', archivePath], target);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/open with none of the keys given: .*--key-file/);
    const imported = await cli(['import', archivePath, '--key-file', join(dataDir, 'control-plane.key')], target);
    expect(imported).toMatchObject({ code: 0 });
    expect(imported.err).toMatch(/imported into DATABASE_URL: .*sources 1/);

    const db = createPostgresDatabase({ url: database.url });
    try {
      const after = createControlPlaneStore({
        db,
        secrets: createSecretBox(sealedCredentialKeys([Buffer.from(SECRETS_KEY, 'utf8')])),
      });
      expect((await after.getTenant('acme'))?.document).toEqual({ name: 'Acme' });
      expect(await after.openSourceSecrets('acme', 'warehouse')).toEqual({ 'connection.password': 'canary-password' });
      // A second import into the now populated store is refused.
      expect(
        (await cli(['import', archivePath, '--key-file', join(dataDir, 'control-plane.key')], target)).err,
      ).toMatch(/not empty/);
    } finally {
      await db.close();
    }
  });

  it('answers a wrong command line with the usage and exit code 2', async () => {
    expect(await cli(['backup'], {})).toMatchObject({ code: 2, err: expect.stringContaining('usage:') });
    expect((await cli(['import'], {})).code).toBe(2);
    expect((await cli(['export', 'file.json'], {})).code).toBe(2);
  });
});

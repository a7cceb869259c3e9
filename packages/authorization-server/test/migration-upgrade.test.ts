import {
  createPgliteDatabase,
  createPostgresDatabase,
  createSecretBox,
  migrate,
  MIGRATIONS,
  type SqlDatabase,
} from '@mcpgw/control-plane';
import { sealedSigningKeyKeys } from '@mcpgw/core';
import { createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSigningKeys } from '../src/key-rotation.js';
import { createAuthorizationServerStorage } from '../src/store/authorization-server-storage.js';

// A control plane written by a gateway before the hosted authorization
// server (schema 4) upgrades in place: its tenants get records, keys and
// account claims, and deleting such a tenant still deletes all of them.

vi.setConfig({ testTimeout: 90_000 });

const VERSION = MIGRATIONS.findIndex((migration) => migration.name === 'authorization-server') + 1;
const box = createSecretBox(sealedSigningKeyKeys([Buffer.from('a server secret of at least thirty-two characters')]));

const ENGINES: Record<string, () => Promise<{ db: SqlDatabase; dispose(): Promise<void> }>> = {
  async postgres() {
    const database = await createTestDatabase('as_upgrade');
    const db = createPostgresDatabase({ url: database.url });
    return {
      db,
      async dispose() {
        await db.close();
        await database.drop();
      },
    };
  },
  async pglite() {
    const db = await createPgliteDatabase();
    return { db, dispose: () => db.close() };
  },
};

describe.each(Object.keys(ENGINES))('upgrading to the authorization server schema on %s', (engine) => {
  const opened: { dispose(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((each) => each.dispose()));
  });

  it('serves the tenants an older gateway wrote, and deletes what they hold with them', async () => {
    const under = await ENGINES[engine]!();
    opened.push(under);
    const { db } = under;
    await migrate(db, MIGRATIONS.slice(0, VERSION - 1));
    await db.exec(`INSERT INTO tenants (id, document, managed_by) VALUES ('acme', '{"name":"Acme"}', 'bootstrap')`);
    expect((await migrate(db)).applied).toEqual(MIGRATIONS.slice(VERSION - 1).map((migration) => migration.version));

    const storage = createAuthorizationServerStorage({ db });
    await storage.adapterFor('acme')('Grant').upsert('g', { accountId: 'alice', clientId: 'app' }, 3600);
    await storage.accounts.put('acme', 'alice', { email: 'alice@acme.example' });
    const keys = await createSigningKeys({ db, sealer: box, retentionSeconds: 60 }).signingKeysOf('acme');
    expect(keys.keys).toHaveLength(1);
    expect((await storage.records.listGrants('acme', {})).map((grant) => grant.accountId)).toEqual(['alice']);

    await db.query(`DELETE FROM tenants WHERE id = 'acme'`);
    for (const table of [
      'authorization_server_records',
      'authorization_server_signing_keys',
      'authorization_server_accounts',
    ]) {
      expect((await db.query(`SELECT 1 FROM ${table}`)).rows, table).toEqual([]);
    }
  });
});

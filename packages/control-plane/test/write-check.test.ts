import { sealedCredentialKeys } from '@mcpgw/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ControlPlaneStore } from '../src/control-plane-store.js';
import type { SqlDatabase } from '../src/sql-database.js';
import type { ControlPlaneReads, WriteCheck } from '../src/write-check.js';
import type { WriteContext } from '../src/write-context.js';
import { createControlPlaneStore } from '../src/control-plane-store.js';
import { createSecretBox } from '../src/secret-box.js';
import { migrate } from '../src/migrate.js';
import { ENGINES, type EngineUnderTest } from './engines.js';

// A write's check runs inside the write's transaction, after the tenant's
// lock and the change: it reads the tenant as it will commit, and throwing
// leaves nothing behind. Two writers whose changes are each fine alone but
// not together (a grant naming a source, that source's removal) never both
// commit.

vi.setConfig({ testTimeout: 60_000 });

const box = createSecretBox(sealedCredentialKeys([Buffer.from('a server secret of at least thirty-two characters')]));
const admin: WriteContext = { actor: { kind: 'tenant-admin', subject: 'alice' }, clientAddress: '192.0.2.7' };
const ROUNDS = 15;

class RuleBroken extends Error {}

/** The cross-entity rule of these tests: every source a grant allows exists. */
const grantsNameExistingSources: WriteCheck = async (reads: ControlPlaneReads) => {
  const sources = new Set((await reads.listEntities('acme', 'source')).map((source) => source.name));
  for (const grant of await reads.listEntities('acme', 'grant')) {
    const allowed = grant.document.allow as { source: string }[];
    const missing = allowed.filter((allow) => !sources.has(allow.source));
    if (missing.length > 0) throw new RuleBroken(`grant ${grant.name} names a missing source`);
  }
};

async function dump(db: SqlDatabase): Promise<string> {
  const tables = ['tenants', 'issuers', 'sources', 'grants', 'admin_role_bindings', 'audit_events'];
  const parts: string[] = [];
  for (const table of tables) parts.push(JSON.stringify((await db.query(`SELECT * FROM ${table} ORDER BY 1`)).rows));
  return parts.join('\n');
}

describe.each(Object.keys(ENGINES) as (keyof typeof ENGINES)[])('a write check on %s', (engine) => {
  let under: EngineUnderTest | undefined;
  afterEach(async () => {
    await under?.dispose();
    under = undefined;
  });
  async function open(): Promise<{ db: SqlDatabase; store: ControlPlaneStore }> {
    under = await ENGINES[engine]();
    await migrate(under.db);
    const store = createControlPlaneStore({ db: under.db, secrets: box });
    await store.createTenant(admin, 'acme', { document: { name: 'Acme' } });
    return { db: under.db, store };
  }

  it('reads the tenant as the write leaves it: the change, the settings, the credentials', async () => {
    const { store } = await open();
    await store.putEntity(admin, 'acme', 'source', 'kept', { type: 'static' }, { secrets: { token: 'kept-value' } });
    const seen: unknown[] = [];
    await store.putEntity(
      admin,
      'acme',
      'source',
      'new',
      { type: 's3' },
      {
        secrets: { key: 'new-value' },
        check: async (reads) => {
          seen.push(
            (await reads.listEntities('acme', 'source')).map((source) => source.name),
            await reads.openSourceSecrets('acme', 'new'),
            await reads.openSourceSecrets('acme', 'kept'),
            (await reads.getEntity('acme', 'source', 'new'))?.version,
          );
        },
      },
    );
    await store.deleteEntity(admin, 'acme', 'source', 'kept', {
      check: async (reads) => {
        seen.push((await reads.getEntity('acme', 'source', 'kept')) === undefined);
      },
    });
    await store.updateTenant(
      admin,
      'acme',
      { document: { name: 'Acme 2' } },
      {
        check: async (reads) => {
          seen.push((await reads.getTenant('acme'))?.document);
        },
      },
    );
    await store.createTenant(
      admin,
      'globex',
      { document: { name: 'Globex' } },
      {
        check: async (reads) => {
          seen.push((await reads.getTenant('globex'))?.document);
        },
      },
    );
    expect(seen).toEqual([
      ['kept', 'new'],
      { key: 'new-value' },
      { token: 'kept-value' },
      1,
      true,
      { name: 'Acme 2' },
      { name: 'Globex' },
    ]);
  });

  it('rolls the whole write back when the check throws: no row, no audit event, no revision, its error as thrown', async () => {
    const { db, store } = await open();
    await store.putEntity(admin, 'acme', 'source', 'notes', { type: 'static' });
    const before = await dump(db);
    const refuse: WriteCheck = async () => {
      throw new RuleBroken('refused');
    };
    const attempts = [
      () => store.putEntity(admin, 'acme', 'grant', 'g', { allow: [] }, { check: refuse }),
      () =>
        store.putEntity(admin, 'acme', 'source', 'notes', { type: 'other' }, { secrets: { a: 'b' }, check: refuse }),
      () => store.deleteEntity(admin, 'acme', 'source', 'notes', { check: refuse }),
      () => store.updateTenant(admin, 'acme', { document: {} }, { check: refuse }),
      () => store.createTenant(admin, 'globex', {}, { check: refuse }),
    ];
    for (const attempt of attempts) await expect(attempt()).rejects.toBeInstanceOf(RuleBroken);
    expect(await dump(db)).toBe(before);
  });

  it('runs a dry run as the write, check included, and rolls it back: what it would store, nothing stored', async () => {
    const { db, store } = await open();
    await store.putEntity(admin, 'acme', 'source', 'notes', { type: 'static' });
    await store.putEntity(admin, 'acme', 'grant', 'readers', { allow: [{ source: 'notes' }] });
    const before = await dump(db);
    const seen: unknown[] = [];
    const would = await store.putEntity(
      admin,
      'acme',
      'grant',
      'readers',
      { allow: [{ source: 'notes', uris: ['notes://a'] }] },
      {
        dryRun: true,
        check: async (reads) => {
          seen.push((await reads.getEntity('acme', 'grant', 'readers'))?.document);
          await grantsNameExistingSources(reads);
        },
      },
    );
    expect(would).toMatchObject({
      name: 'readers',
      version: 2,
      document: { allow: [{ source: 'notes', uris: ['notes://a'] }] },
    });
    // The check read the tenant as the write would leave it.
    expect(seen).toEqual([{ allow: [{ source: 'notes', uris: ['notes://a'] }] }]);
    // A dry run the check refuses throws what the write would.
    await expect(
      store.putEntity(
        admin,
        'acme',
        'grant',
        'new',
        { allow: [{ source: 'nosuch' }] },
        { dryRun: true, check: grantsNameExistingSources },
      ),
    ).rejects.toBeInstanceOf(RuleBroken);
    expect(await dump(db)).toBe(before);
  });

  it('never commits both of two writes that are fine alone but not together', async () => {
    const { store } = await open();
    // Postgres: each writer on a connection pool of its own, as two replicas would be.
    const writers = [0, 1].map((i) =>
      i === 0 || under!.connectAgain === undefined
        ? store
        : createControlPlaneStore({ db: under!.connectAgain(), secrets: box }),
    );
    for (let round = 0; round < ROUNDS; round += 1) {
      const source = `s${round}`;
      const added = await store.putEntity(admin, 'acme', 'source', source, { type: 'static' });
      const [removal, grant] = await Promise.allSettled([
        writers[0]!.deleteEntity(admin, 'acme', 'source', source, {
          ifVersion: added.version,
          check: grantsNameExistingSources,
        }),
        writers[1]!.putEntity(
          admin,
          'acme',
          'grant',
          `g${round}`,
          { allow: [{ source }] },
          { create: true, check: grantsNameExistingSources },
        ),
      ]);
      expect([removal.status, grant.status].sort()).toEqual(['fulfilled', 'rejected']);
      const refused = [removal, grant].find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult;
      expect(refused.reason).toBeInstanceOf(RuleBroken);
      await expect(grantsNameExistingSources(store)).resolves.toBeUndefined();
    }
  });
});

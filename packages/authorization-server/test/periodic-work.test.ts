import { createControlPlaneStore, createSecretBox } from '@mcpgw/control-plane';
import { sealedCredentialKeys, sealedSigningKeyKeys, silentLogger } from '@mcpgw/core';
import { within } from '@mcpgw/test-helpers/within';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createSigningKeys, startKeyRotation, SUCCESSOR_PUBLICATION_SECONDS } from '../src/key-rotation.js';
import { startExpiredRecordSweep } from '../src/store/expired-record-sweep.js';
import { createSqlRecordStore } from '../src/store/sql-record-store.js';
import { createTenant, manualClock, SQL_ENGINES, type SqlUnderTest } from './storage-engines.js';

// The two periodic jobs, each under the control plane's exclusive work so
// replicas take turns: the sweep of expired SQL records and the rotation of
// every tenant's signing keys. Time is an injected clock; the jobs' own
// timers run for real at a short interval.

vi.setConfig({ testTimeout: 60_000 });

const SECRET = Buffer.from('a server secret of at least thirty-two characters');
const DAY = 24 * 3600_000;

describe('periodic work of the authorization server store', () => {
  let sql: SqlUnderTest;
  beforeAll(async () => {
    sql = await SQL_ENGINES.postgres();
  });
  afterAll(async () => {
    await sql?.close();
  });

  const exclusivelyOn = (db: SqlUnderTest['db']) =>
    createControlPlaneStore({ db, secrets: createSecretBox(sealedCredentialKeys([SECRET])) }).exclusively;

  it('sweeps expired records on two replicas at once without error, keeping the live ones', async () => {
    const clock = manualClock();
    const store = createSqlRecordStore({ db: sql.db, now: clock.now });
    const tenant = await createTenant(sql.db);
    for (let i = 0; i < 20; i += 1) await store.upsert(tenant, 'Session', `s${i}`, { uid: `u${i}` }, 60 + i * 60);
    clock.advance(10 * 60_000 + 1);
    const sweeps = [sql.db, sql.replica].map((db) =>
      startExpiredRecordSweep({ db, exclusively: exclusivelyOn(db), now: clock.now, logger: silentLogger }),
    );
    try {
      const deleted = await Promise.all(sweeps.map((sweep) => sweep.sweepOnce()));
      expect(deleted.reduce((sum, n) => sum + n, 0)).toBe(10);
      expect(await store.find(tenant, 'Session', 's10')).toEqual({ uid: 'u10' });
    } finally {
      sweeps.forEach((sweep) => sweep.stop());
    }
  });

  it('sweeps on its own timer', async () => {
    const clock = manualClock();
    const store = createSqlRecordStore({ db: sql.db, now: clock.now });
    const tenant = await createTenant(sql.db);
    await store.upsert(tenant, 'Interaction', 'i', { kind: 'Interaction' }, 60);
    clock.advance(61_000);
    const sweep = startExpiredRecordSweep({
      db: sql.db,
      exclusively: exclusivelyOn(sql.db),
      now: clock.now,
      intervalMs: 20,
      logger: silentLogger,
    });
    try {
      await within(10_000, async () => {
        const { rows } = await sql.db.query('SELECT 1 FROM authorization_server_records WHERE tenant_id = $1', [
          tenant,
        ]);
        expect(rows).toEqual([]);
      });
    } finally {
      sweep.stop();
    }
  });

  it('publishes, then signs with, the successor of a tenant that is due on its own timer', async () => {
    const clock = manualClock();
    const keys = createSigningKeys({
      db: sql.db,
      sealer: createSecretBox(sealedSigningKeyKeys([SECRET])),
      now: clock.now,
      retentionSeconds: 3600,
    });
    const tenant = await createTenant(sql.db);
    const before = await keys.signingKeysOf(tenant);
    // Read from the table, so only the timer rotates (signingKeysOf would bring the keys up to date itself).
    const stored = async () =>
      (
        await sql.db.query<{ kid: string; signs: boolean }>(
          `SELECT kid, (signing_since IS NOT NULL) AS signs FROM authorization_server_signing_keys
            WHERE tenant_id = $1 AND retired_at IS NULL ORDER BY kid`,
          [tenant],
        )
      ).rows;
    const signer = async () => (await stored()).find((key) => key.signs)?.kid;
    clock.advance(30 * DAY);
    const stop = startKeyRotation({ keys, exclusively: exclusivelyOn(sql.db), intervalMs: 20, logger: silentLogger });
    try {
      await within(10_000, async () => expect(await stored()).toHaveLength(2));
      expect(await signer()).toBe(before.keys[0]!.kid);
      clock.advance(SUCCESSOR_PUBLICATION_SECONDS * 1000);
      await within(10_000, async () => expect(await signer()).not.toBe(before.keys[0]!.kid));
    } finally {
      stop();
    }
    expect((await keys.signingKeysOf(tenant)).keys.map((key) => key.kid)).toContain(before.keys[0]!.kid);
  });
});

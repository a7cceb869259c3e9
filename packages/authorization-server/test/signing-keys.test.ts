import { createSecretBox } from '@mcpgw/control-plane';
import { sealedCredentialKeys, sealedSigningKeyKeys } from '@mcpgw/core';
import { createLocalJWKSet, importJWK, jwtVerify, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { within } from '@mcpgw/test-helpers/within';
import { createSigningKeys, SUCCESSOR_PUBLICATION_SECONDS, type SigningKeys } from '../src/key-rotation.js';
import { createTenant, manualClock, SQL_ENGINES, type SqlUnderTest } from './storage-engines.js';

// Per-tenant signing keys on both control-plane engines, with a clock the
// test moves: made on first use, sealed at rest; after the period a
// successor is published (and does not sign) for the publication delay,
// then signs; the retired key is published (and never signs) until
// everything it signed has expired, then deleted; every change announced
// to every replica.

vi.setConfig({ testTimeout: 60_000 });

const SECRET = Buffer.from('a server secret of at least thirty-two characters');
const box = createSecretBox(sealedSigningKeyKeys([SECRET]));
const DAY = 24 * 3600_000;
const RETENTION_SECONDS = 3600 + 60;
const PUBLICATION = SUCCESSOR_PUBLICATION_SECONDS * 1000;

async function sign(jwk: JWK, claims: Record<string, unknown>): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: jwk.kid! }).sign(await importJWK(jwk, 'RS256'));
}

describe.each(['postgres', 'pglite'] as const)('signing keys on %s', (engine) => {
  let sql: SqlUnderTest;
  beforeAll(async () => {
    sql = await SQL_ENGINES[engine]();
  });
  afterAll(async () => {
    await sql?.close();
  });

  const keysOn = (clock: ReturnType<typeof manualClock>, db = sql.db): SigningKeys =>
    createSigningKeys({
      db,
      sealer: box,
      now: clock.now,
      rotationPeriodSeconds: 30 * 24 * 3600,
      retentionSeconds: RETENTION_SECONDS,
    });

  it('makes one RS256 key on first use, the same on every later call, sealed at rest', async () => {
    const clock = manualClock();
    const keys = keysOn(clock);
    const tenant = await createTenant(sql.db);
    const first = await keys.signingKeysOf(tenant);
    expect(first.keys).toHaveLength(1);
    expect(first.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', d: expect.any(String) });
    expect(first.jwks.keys).toEqual([expect.objectContaining({ kid: first.keys[0]!.kid, n: first.keys[0]!.n })]);
    expect(first.jwks.keys[0]).not.toHaveProperty('d');
    clock.advance(DAY);
    expect(await keys.signingKeysOf(tenant)).toEqual(first);

    const { rows } = await sql.db.query<{ sealed_private_jwk: string; public_jwk: JWK }>(
      'SELECT sealed_private_jwk, public_jwk FROM authorization_server_signing_keys WHERE tenant_id = $1',
      [tenant],
    );
    expect(rows[0]!.sealed_private_jwk).not.toContain(first.keys[0]!.d!);
    expect(rows[0]!.public_jwk).not.toHaveProperty('d');
    // Sealed for this purpose only: the credentials' key (same secret, another label) does not open it.
    const credentials = createSecretBox(sealedCredentialKeys([SECRET]));
    await expect(
      createSigningKeys({ db: sql.db, sealer: credentials, retentionSeconds: 60 }).signingKeysOf(tenant),
    ).rejects.toThrow(/sealed with key/);
  });

  it('publishes a successor for a key older than the period, signs with it after the delay, keeps the old one for verifiers, then deletes it', async () => {
    const clock = manualClock();
    const keys = keysOn(clock);
    const tenant = await createTenant(sql.db);
    const original = await keys.signingKeysOf(tenant);
    const oldKey = original.keys[0]!;

    clock.advance(30 * DAY - 1000);
    expect(await keys.rotate(tenant)).toBe(false);
    clock.advance(1000);
    expect(await keys.rotate(tenant)).toBe(true);
    // Published, not signing: the old key still signs, and every verifier already trusts the new one.
    const published = await keys.signingKeysOf(tenant);
    expect(published.revision).not.toBe(original.revision);
    expect(published.keys.map((key) => key.kid)).toEqual([oldKey.kid, expect.not.stringMatching(oldKey.kid!)]);
    expect(published.keys[0]).not.toHaveProperty('key_ops');
    expect(published.keys[1]).toMatchObject({ key_ops: ['verify'] });
    const newKey = published.keys[1]!;
    const earlyTokenOfNewKey = await sign({ ...newKey, key_ops: undefined }, { sub: 'carol' });
    await expect(jwtVerify(earlyTokenOfNewKey, createLocalJWKSet(published.jwks))).resolves.toBeDefined();
    expect((await keysOn(clock, sql.replica).signingKeysOf(tenant)).revision).toBe(published.revision);

    clock.advance(PUBLICATION - 1000);
    expect(await keys.rotate(tenant)).toBe(false);
    expect((await keys.signingKeysOf(tenant)).keys[0]!.kid).toBe(oldKey.kid);
    // Signed a moment before the switch, valid for an hour (the longest token lifetime).
    const tokenOfOldKey = await sign(oldKey, { sub: 'alice', exp: Math.floor(clock.now() / 1000) + 3600 });
    clock.advance(1000);
    expect(await keys.rotate(tenant)).toBe(true);
    const rotated = await keys.signingKeysOf(tenant);
    expect(rotated.revision).not.toBe(published.revision);
    expect(rotated.keys.map((key) => key.kid)).toEqual([newKey.kid, oldKey.kid]);
    // The retired key is published for verification only, so it never signs again.
    expect(rotated.keys[1]).toMatchObject({ kid: oldKey.kid, key_ops: ['verify'] });
    expect(rotated.keys[0]).not.toHaveProperty('key_ops');
    const jwks = createLocalJWKSet(rotated.jwks);
    await expect(jwtVerify(tokenOfOldKey, jwks, { currentDate: new Date(clock.now()) })).resolves.toBeDefined();
    const tokenOfNewKey = await sign(rotated.keys[0]!, { sub: 'bob' });
    await expect(jwtVerify(tokenOfNewKey, jwks)).resolves.toBeDefined();

    // Retention counts from the retirement, not from the successor's publication.
    clock.advance(RETENTION_SECONDS * 1000 - 1000);
    const lastMoment = await keys.signingKeysOf(tenant);
    expect(lastMoment.keys).toHaveLength(2);
    await expect(
      jwtVerify(tokenOfOldKey, createLocalJWKSet(lastMoment.jwks), { currentDate: new Date(clock.now() - 61_000) }),
    ).resolves.toBeDefined();
    clock.advance(1000);
    const pruned = await keys.signingKeysOf(tenant);
    expect(pruned.keys.map((key) => key.kid)).toEqual([newKey.kid]);
    expect(pruned.revision).not.toBe(rotated.revision);
    await expect(jwtVerify(tokenOfOldKey, createLocalJWKSet(pruned.jwks))).rejects.toThrow();
  });

  it('counts the next period from when the successor started signing', async () => {
    const clock = manualClock();
    const keys = keysOn(clock);
    const tenant = await createTenant(sql.db);
    await keys.signingKeysOf(tenant);
    clock.advance(30 * DAY);
    await keys.rotate(tenant);
    clock.advance(DAY);
    await keys.rotate(tenant);
    const signer = (await keys.signingKeysOf(tenant)).keys[0]!.kid;
    clock.advance(30 * DAY - 1000);
    // The retired key is long gone by now; no successor yet.
    expect((await keys.signingKeysOf(tenant)).keys.map((key) => key.kid)).toEqual([signer]);
    clock.advance(1000);
    expect(await keys.rotate(tenant)).toBe(true);
    const next = await keys.signingKeysOf(tenant);
    expect(next.keys).toHaveLength(2);
    expect(next.keys[0]!.kid).toBe(signer);
  });

  it('makes one key, and one successor, however many replicas ask at once', async () => {
    const clock = manualClock();
    const tenant = await createTenant(sql.db);
    const replicas = [keysOn(clock, sql.db), keysOn(clock, sql.replica), keysOn(clock, sql.replica)];
    const first = await Promise.all(replicas.map((keys) => keys.signingKeysOf(tenant)));
    expect(new Set(first.map((set) => set.keys[0]!.kid)).size).toBe(1);
    clock.advance(31 * DAY);
    const published = await Promise.all(replicas.map((keys) => keys.rotate(tenant)));
    expect(published.filter(Boolean)).toHaveLength(1);
    const successor = (await replicas[0]!.signingKeysOf(tenant)).keys[1]!.kid;
    clock.advance(PUBLICATION);
    const promoted = await Promise.all(replicas.map((keys) => keys.rotate(tenant)));
    expect(promoted.filter(Boolean)).toHaveLength(1);
    const after = await replicas[0]!.signingKeysOf(tenant);
    expect(after.keys.map((key) => key.kid)).toEqual([successor, first[0]!.keys[0]!.kid]);
  });

  it('rotates every tenant that is due and tells every replica which', async () => {
    const clock = manualClock();
    const keys = keysOn(clock);
    const a = await createTenant(sql.db);
    const b = await createTenant(sql.db);
    await keys.signingKeysOf(a);
    clock.advance(10 * DAY);
    await keys.signingKeysOf(b);
    clock.advance(21 * DAY);
    const heard: string[] = [];
    const stop = await keysOn(clock, sql.replica).watch((tenantId) => heard.push(tenantId));
    try {
      expect(await keys.rotateAll()).toContain(a);
      await within(10_000, () => expect(heard).toContain(a));
      expect(heard).not.toContain(b);
    } finally {
      await stop();
    }
  });

  it('deletes the keys of a deleted tenant with it', async () => {
    const keys = keysOn(manualClock());
    const tenant = await createTenant(sql.db);
    await keys.signingKeysOf(tenant);
    await sql.db.query('DELETE FROM tenants WHERE id = $1', [tenant]);
    const { rows } = await sql.db.query('SELECT 1 FROM authorization_server_signing_keys WHERE tenant_id = $1', [
      tenant,
    ]);
    expect(rows).toEqual([]);
  });
});

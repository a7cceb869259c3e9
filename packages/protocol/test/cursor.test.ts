import { createHmac, hkdfSync } from 'node:crypto';
import { createServerKeys } from '@mcpgw/core';
import { describe, expect, it } from 'vitest';
import { createCursorCodec } from '../src/cursor.js';

const binding = { tenantId: 'acme', fingerprint: 'fp-1', listing: 'resources' };
const secret = Buffer.from('k'.repeat(32));
const refused = expect.objectContaining({
  code: 'MCPGW_CURSOR_INVALID',
  message: expect.stringContaining('list again without a cursor'),
});

describe('cursor codec', () => {
  const codec = createCursorCodec({ key: secret });

  it('round-trips state for the same binding', () => {
    const cursor = codec.encode(binding, { source: 1, position: 'abc' });
    expect(codec.decode(binding, cursor)).toEqual({ source: 1, position: 'abc' });
  });

  it.each([
    ['another tenant', { ...binding, tenantId: 'other' }],
    ['another principal', { ...binding, fingerprint: 'fp-2' }],
    ['another listing', { ...binding, listing: 'templates' }],
  ])('refuses a cursor presented for %s', (_name, other) => {
    const cursor = codec.encode(binding, 1);
    expect(() => codec.decode(other, cursor)).toThrow(refused);
  });

  it('keeps the state unreadable: no byte of the cursor, however decoded, holds the position', () => {
    const position = '/vault/payroll-2026.xlsx';
    const cursor = codec.encode(binding, { source: 0, sourceId: 'handbook', position });
    for (const bytes of [Buffer.from(cursor), Buffer.from(cursor, 'base64url'), Buffer.from(cursor, 'base64')]) {
      for (const secretPart of ['payroll', 'vault', 'handbook', 'acme', 'fp-1']) {
        expect(bytes.includes(Buffer.from(secretPart))).toBe(false);
      }
    }
  });

  it('never repeats a cursor for the same state (random nonce) and stays compact base64url', () => {
    const state = { source: 3, sourceId: 'warehouse', position: 'public.orders' };
    const cursors = new Set(Array.from({ length: 100 }, () => codec.encode(binding, state)));
    expect(cursors.size).toBe(100);
    for (const cursor of cursors) {
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(cursor.length).toBeLessThan(200);
    }
  });

  it('hides the exact length of the position (padded to 32 bytes)', () => {
    const sealedLengths = Array.from(
      { length: 64 },
      // version byte, nonce and tag around the ciphertext
      (_, n) => Buffer.from(codec.encode(binding, { source: 0, position: 'x'.repeat(n) }), 'base64url').length - 29,
    );
    for (const length of sealedLengths) expect(length % 32).toBe(0);
    // 64 different position lengths fall into at most three padded sizes.
    expect(new Set(sealedLengths).size).toBeLessThanOrEqual(3);
  });

  it('refuses every single-byte change anywhere in the cursor', () => {
    const cursor = codec.encode(binding, { position: 'a' });
    const bytes = Buffer.from(cursor, 'base64url');
    for (let i = 0; i < bytes.length; i += 1) {
      const changed = Buffer.from(bytes);
      changed[i] = changed[i]! ^ 0x01;
      expect(() => codec.decode(binding, changed.toString('base64url'))).toThrow(refused);
    }
    // Truncated, extended, and a non-canonical spelling of the same bytes.
    expect(() => codec.decode(binding, cursor.slice(0, -3))).toThrow(refused);
    expect(() => codec.decode(binding, `${cursor}A`)).toThrow(refused);
    expect(() => codec.decode(binding, `${cursor}==`)).toThrow(refused);
  });

  it('refuses a cursor sealed under another key, garbage, and the old signed format', () => {
    const foreign = createCursorCodec({ key: Buffer.from('x'.repeat(32)) }).encode(binding, 1);
    expect(() => codec.decode(binding, foreign)).toThrow(refused);
    for (const junk of ['', '.', 'abc', 'a.b', 'x'.repeat(10_000), 'AgAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', '////']) {
      expect(() => codec.decode(binding, junk)).toThrow(refused);
    }
    // A version 1 cursor (signed JSON, readable) with a valid MAC under the old key derivation.
    const oldKey = Buffer.from(hkdfSync('sha256', secret, new Uint8Array(0), 'mcpgw cursor v1', 32));
    const payload = Buffer.from(
      JSON.stringify({ v: 1, t: 'acme', f: 'fp-1', l: 'resources', x: Date.now() + 60_000, s: 1 }),
    ).toString('base64url');
    const v1 = `${payload}.${createHmac('sha256', oldKey).update(payload).digest('base64url')}`;
    expect(() => codec.decode(binding, v1)).toThrow(refused);
  });

  it('refuses an expired cursor and honours one until then', () => {
    let now = 1_000;
    const clocked = createCursorCodec({ key: secret, maxAgeMs: 100, now: () => now });
    const expiring = clocked.encode(binding, 1);
    now = 1_100;
    expect(clocked.decode(binding, expiring)).toBe(1);
    now = 1_101;
    expect(() => clocked.decode(binding, expiring)).toThrow(refused);
  });

  // Sealed before the cursor key was derived in @mcpgw/core, under this SECRETS_KEY: a cursor a
  // client holds across the upgrade still continues its listing.
  it('opens a cursor sealed before, under the same SECRETS_KEY', () => {
    const keys = createServerKeys({ secretsKey: 'a fixed SECRETS_KEY for key vectors, 32+ characters' });
    const earlier = createCursorCodec({ key: keys.cursor, now: () => 1_700_000_000_000 });
    const cursor = 'AmbHNtROzkdchtJbz6mu5H9rNaEfUiTxZnFSPMo1B71BnCEcsheOyy26cpqFtiqze0Qma0rOq8w-ja2eUA';
    expect(earlier.decode({ tenantId: 'acme', fingerprint: 'fp', listing: 'resources/list' }, cursor)).toEqual({
      p: 1,
    });
  });

  it('takes a 32-byte key only, never a server secret as it stands', () => {
    expect(() => createCursorCodec({ key: Buffer.from('a server secret of at least thirty-two characters') })).toThrow(
      TypeError,
    );
  });
});

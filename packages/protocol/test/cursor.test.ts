import { describe, expect, it } from 'vitest';
import { createCursorCodec } from '../src/index.js';

const binding = { tenantId: 'acme', fingerprint: 'fp-1', listing: 'resources' };

describe('cursor codec', () => {
  const codec = createCursorCodec({ secret: Buffer.from('k'.repeat(32)) });

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
    expect(() => codec.decode(other, cursor)).toThrow(expect.objectContaining({ code: -32602 }));
  });

  it('refuses a tampered payload, a foreign key, garbage and an expired cursor', () => {
    const cursor = codec.encode(binding, { position: 'a' });
    const [payload, mac] = cursor.split('.') as [string, string];
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), s: { position: 'z' } }),
    ).toString('base64url');
    expect(() => codec.decode(binding, `${forged}.${mac}`)).toThrow(expect.objectContaining({ code: -32602 }));
    const foreign = createCursorCodec({ secret: Buffer.from('x'.repeat(32)) }).encode(binding, 1);
    expect(() => codec.decode(binding, foreign)).toThrow(expect.objectContaining({ code: -32602 }));
    for (const junk of ['', '.', 'abc', 'a.b', 'x'.repeat(10_000)]) {
      expect(() => codec.decode(binding, junk)).toThrow(expect.objectContaining({ code: -32602 }));
    }
    let now = 1_000;
    const clocked = createCursorCodec({ secret: Buffer.from('k'.repeat(32)), maxAgeMs: 100, now: () => now });
    const expiring = clocked.encode(binding, 1);
    now = 1_101;
    expect(() => clocked.decode(binding, expiring)).toThrow(expect.objectContaining({ code: -32602 }));
  });
});

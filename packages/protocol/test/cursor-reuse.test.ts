import { describe, expect, it } from 'vitest';
import { createCursorCodec } from '../src/cursor.js';
import { reuseSealedCursors } from '../src/cursor-reuse.js';

const binding = { tenantId: 'acme', fingerprint: 'fp-1', listing: 'resources' };
const state = { source: 0, sourceId: 'docs', position: '100' };

function codecAt(clock: { now: number }, maxEntries?: number) {
  const inner = createCursorCodec({ key: Buffer.from('k'.repeat(32)), now: () => clock.now });
  return reuseSealedCursors(inner, { reuseMs: 60_000, now: () => clock.now, ...(maxEntries ? { maxEntries } : {}) });
}

describe('reusing sealed cursors', () => {
  it('hands the same caller the same cursor for the same place within the reuse window, and it decodes', () => {
    const clock = { now: 1_000_000 };
    const codec = codecAt(clock);
    const first = codec.encode(binding, state);
    clock.now += 59_000;
    expect(codec.encode(binding, { ...state })).toBe(first);
    expect(codec.decode(binding, first)).toEqual(state);
  });

  it('seals anew once the window has passed', () => {
    const clock = { now: 1_000_000 };
    const codec = codecAt(clock);
    const first = codec.encode(binding, state);
    clock.now += 60_001;
    const second = codec.encode(binding, state);
    expect(second).not.toBe(first);
    expect(codec.decode(binding, second)).toEqual(state);
  });

  it.each([
    ['another principal', { ...binding, fingerprint: 'fp-2' }],
    ['another tenant', { ...binding, tenantId: 'globex' }],
    ['another listing', { ...binding, listing: 'templates' }],
  ])('never hands a cursor to %s, whose own cursor the first caller cannot use', (_name, other) => {
    const codec = codecAt({ now: 1_000_000 });
    const mine = codec.encode(binding, state);
    const theirs = codec.encode(other, state);
    expect(theirs).not.toBe(mine);
    expect(() => codec.decode(binding, theirs)).toThrow(expect.objectContaining({ code: 'MCPGW_CURSOR_INVALID' }));
  });

  it('keeps a different place apart and forgets the least recently used beyond its bound', () => {
    const codec = codecAt({ now: 1_000_000 }, 2);
    const a = codec.encode(binding, { ...state, position: 'a' });
    const b = codec.encode(binding, { ...state, position: 'b' });
    expect(b).not.toBe(a);
    expect(codec.encode(binding, { ...state, position: 'a' })).toBe(a); // a is now the most recent
    codec.encode(binding, { ...state, position: 'c' }); // evicts b
    expect(codec.encode(binding, { ...state, position: 'a' })).toBe(a);
    expect(codec.encode(binding, { ...state, position: 'b' })).not.toBe(b);
  });
});

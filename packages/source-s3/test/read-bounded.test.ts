import { describe, expect, it } from 'vitest';
import { readBounded } from '../src/read-bounded.js';

class TooLarge extends Error {}

function stream(chunks: number[]): AsyncIterable<Uint8Array> & { destroyed: boolean; pulled: number } {
  const state = {
    destroyed: false,
    pulled: 0,
    async *[Symbol.asyncIterator]() {
      try {
        for (const size of chunks) {
          state.pulled += 1;
          yield new Uint8Array(size);
        }
      } finally {
        state.destroyed = true;
      }
    },
  };
  return state;
}

describe('readBounded', () => {
  const signal = new AbortController().signal;

  it('returns the whole body when it fits', async () => {
    const body = await readBounded(stream([3, 4]), 7, undefined, () => new TooLarge(), signal);
    expect(body).toHaveLength(7);
  });

  it('refuses a declared length over the cap without reading', async () => {
    const body = stream([8]);
    await expect(readBounded(body, 7, 8, () => new TooLarge(), signal)).rejects.toBeInstanceOf(TooLarge);
    expect(body.pulled).toBe(0);
  });

  it('stops reading as soon as an undeclared body passes the cap, and releases the stream', async () => {
    const body = stream([4, 4, 4, 4]);
    await expect(readBounded(body, 7, undefined, () => new TooLarge(), signal)).rejects.toBeInstanceOf(TooLarge);
    expect(body.pulled).toBe(2);
    expect(body.destroyed).toBe(true);
  });
});

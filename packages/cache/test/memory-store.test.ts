import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../src/memory-store.js';

describe('in-process store', () => {
  it('expires an entry exactly at its ttl (fake clock)', async () => {
    let now = 1_000_000;
    const store = createMemoryStore({ now: () => now });
    await store.set('k', 'v', 60_000);
    now += 59_999;
    expect(await store.get('k')).toBe('v');
    now += 1;
    expect(await store.get('k')).toBeUndefined();
  });

  it('evicts the least recently used entry when the entry bound is reached', async () => {
    const store = createMemoryStore({ maxEntries: 2 });
    await store.set('a', '1', 1000);
    await store.set('b', '2', 1000);
    await store.get('a'); // a is now the most recently used
    await store.set('c', '3', 1000);
    expect(await store.getMany(['a', 'b', 'c'])).toEqual(['1', undefined, '3']);
  });

  it('stays within its byte bound and refuses an entry larger than the whole bound', async () => {
    const store = createMemoryStore({ maxBytes: 100 });
    await store.set('a', 'x'.repeat(20), 1000); // (1 + 20) * 2 = 42 bytes
    await store.set('b', 'y'.repeat(20), 1000);
    await store.set('c', 'z'.repeat(20), 1000); // 126 > 100: 'a' goes
    expect(await store.getMany(['a', 'b', 'c'])).toEqual([undefined, 'y'.repeat(20), 'z'.repeat(20)]);
    await store.set('huge', 'h'.repeat(100), 1000);
    expect(await store.get('huge')).toBeUndefined();
    expect(await store.get('c')).toBe('z'.repeat(20));
  });

  it('sets only absent keys (the lock primitive)', async () => {
    const store = createMemoryStore();
    expect(await store.setIfAbsent('lock', 'me', 1000)).toBe(true);
    expect(await store.setIfAbsent('lock', 'you', 1000)).toBe(false);
    await store.delete('lock');
    expect(await store.setIfAbsent('lock', 'you', 1000)).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { RecencyMap } from '../src/recency-map.js';

/** Fills a map bounded to `max` as a cache does: set, then evict while over the bound. */
function boundedSet<K, V>(map: RecencyMap<K, V>, max: number, key: K, value: V): Array<K> {
  map.set(key, value);
  const evicted: K[] = [];
  while (map.size > max) {
    const gone = map.evict();
    if (gone === undefined) break;
    evicted.push(gone[0]);
  }
  return evicted;
}

describe('RecencyMap', () => {
  it('evicts the entry not used since it was stored before the ones that were', () => {
    const map = new RecencyMap<string, number>();
    map.set('a', 1);
    map.set('b', 2);
    map.set('c', 3);
    expect(map.get('a')).toBe(1);
    expect(map.evict()).toEqual(['b', 2]);
    expect(map.evict()).toEqual(['a', 1]); // a's use was spent on its second chance
    expect(map.size).toBe(1);
  });

  it('never evicts the entry stored last to make room for it', () => {
    const map = new RecencyMap<string, number>();
    for (const key of ['a', 'b', 'c']) boundedSet(map, 3, key, 0);
    for (const key of ['a', 'b', 'c']) map.get(key);
    // Every older entry was used: the newcomer still stays, and the oldest of them goes.
    expect(boundedSet(map, 3, 'd', 0)).toEqual(['a']);
    expect(map.peek('d')).toBe(0);
    expect(map.evict()).toEqual(['b', 0]);
  });

  it('does not count a peek as a use, and keeps a re-stored key in its place as used', () => {
    const map = new RecencyMap<string, number>();
    map.set('a', 1);
    map.set('b', 2);
    map.set('c', 3);
    expect(map.peek('a')).toBe(1);
    map.set('b', 20);
    expect(map.evict()).toEqual(['a', 1]);
    expect(map.get('b')).toBe(20);
  });

  it('has nothing to evict when empty or holding only the newest entry', () => {
    const map = new RecencyMap<string, number>();
    expect(map.evict()).toBeUndefined();
    map.set('only', 1);
    expect(map.evict()).toBeUndefined();
    expect(map.delete('only')).toBe(true);
    expect(map.size).toBe(0);
  });

  it('stays within its bound, answers what a Map would for what it kept, and never evicts what was just stored', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), key: fc.integer({ min: 0, max: 12 }) }),
      fc.record({ kind: fc.constant('get' as const), key: fc.integer({ min: 0, max: 12 }) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.array(op, { maxLength: 200 }), (max, ops) => {
        const map = new RecencyMap<number, number>();
        const model = new Map<number, number>();
        ops.forEach(({ kind, key }, step) => {
          if (kind === 'get') {
            expect(map.get(key)).toBe(model.get(key));
            return;
          }
          const evicted = boundedSet(map, max, key, step);
          model.set(key, step);
          for (const gone of evicted) {
            expect(gone).not.toBe(key);
            expect(model.has(gone)).toBe(true);
            model.delete(gone);
          }
          expect(map.size).toBe(model.size);
          expect(map.size).toBeLessThanOrEqual(max);
        });
      }),
      { numRuns: 300 },
    );
  });
});

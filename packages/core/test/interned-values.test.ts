import { describe, expect, it } from 'vitest';
import { InternedValues, internStringList } from '../src/interned-values.js';

describe('InternedValues', () => {
  it('hands every caller of equal content the one frozen copy, and unequal content its own', () => {
    const lists = new InternedValues<readonly string[]>(10);
    const a = internStringList(lists, 'mcp:read'.split(' '));
    const b = internStringList(lists, ['mcp:read']);
    expect(b).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
    expect(() => (a as string[]).push('mcp:write')).toThrow(TypeError);
    expect(internStringList(lists, ['mcp:read', 'mcp:write'])).not.toBe(a);
    // JSON keys it: lists whose joined text is the same stay apart.
    expect(internStringList(lists, ['a,b'])).not.toBe(internStringList(lists, ['a', 'b']));
    expect(internStringList(lists, ['a,b'])).toEqual(['a,b']);
  });

  it('keeps no more than its bound, and still answers with equal content past it', () => {
    const lists = new InternedValues<readonly string[]>(3);
    for (let i = 0; i < 10; i += 1) expect(internStringList(lists, [`scope-${i}`])).toEqual([`scope-${i}`]);
    expect(lists.size).toBeLessThanOrEqual(3);
  });

  it('gives the empty list one shared frozen copy without storing it', () => {
    const lists = new InternedValues<readonly string[]>(3);
    expect(internStringList(lists, [])).toBe(internStringList(lists, []));
    expect(Object.isFrozen(internStringList(lists, []))).toBe(true);
    expect(lists.size).toBe(0);
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeSegment, encodeSegment, parseResourceUri, schemaUri, tableUri } from '../src/resource-uri.js';
import { identifier } from './identifier-arbitrary.js';

/** RFC 6570 section 3.2.2 simple string expansion of one value (what clients do with `{table}`). */
function rfc6570Simple(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

describe('URI segments', () => {
  it('round-trip any identifier', () => {
    fc.assert(
      fc.property(identifier, identifier, (schema, table) => {
        expect(decodeSegment(encodeSegment(table))).toBe(table);
        expect(parseResourceUri('src', tableUri('src', schema, table))).toEqual({ kind: 'table', schema, table });
        expect(parseResourceUri('src', schemaUri('src', schema))).toEqual({ kind: 'schema', schema });
      }),
      { numRuns: 2000 },
    );
  });

  it('match an RFC 6570 expansion of the template exactly', () => {
    fc.assert(
      fc.property(identifier, (name) => {
        expect(encodeSegment(name)).toBe(rfc6570Simple(name));
      }),
      { numRuns: 2000 },
    );
  });

  it('accept only the canonical spelling', () => {
    expect(decodeSegment('orders')).toBe('orders');
    expect(decodeSegment('%6Frders')).toBeUndefined();
    expect(decodeSegment('my%20table')).toBe('my table');
    expect(decodeSegment('my%2btable')).toBeUndefined();
    expect(decodeSegment('my table')).toBeUndefined();
    expect(decodeSegment('%')).toBeUndefined();
    expect(decodeSegment('%ZZ')).toBeUndefined();
    expect(decodeSegment('%C3')).toBeUndefined();
    expect(decodeSegment('%00')).toBeUndefined();
    expect(decodeSegment('')).toBeUndefined();
    expect(decodeSegment('x'.repeat(64))).toBeUndefined();
    expect(decodeSegment('%C3%A9'.repeat(31) + 'x')).toBe('é'.repeat(31) + 'x');
    expect(decodeSegment('%C3%A9'.repeat(32))).toBeUndefined();
  });

  it('never contain a host: the authority is empty and the source id comes first', () => {
    expect(tableUri('crm', 'public', 'a/b')).toBe('db+postgres:///crm/public/a%2Fb');
    expect(new URL(tableUri('crm', 'public', 'x')).host).toBe('');
    expect(parseResourceUri('crm', 'db+postgres:///crm/public/orders/rows?limit=5')).toEqual({
      kind: 'rows',
      schema: 'public',
      table: 'orders',
      query: 'limit=5',
    });
    expect(parseResourceUri('crm', 'db+postgres:///other/public/orders')).toBeUndefined();
  });
});

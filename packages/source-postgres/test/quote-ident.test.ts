import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresUrl, requirePostgres } from '@mcpgw/test-helpers/postgres';
import { quoteIdent } from '../src/quote-ident.js';
import { displayIdent } from '../src/quote-ident.js';
import { identifier } from './identifier-arbitrary.js';

let client: pg.Client;

beforeAll(async () => {
  await requirePostgres();
  client = new pg.Client({ connectionString: postgresUrl(), connectionTimeoutMillis: 3000 });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
});

describe('quoteIdent', () => {
  it('makes the server read back exactly the given name, for any identifier', async () => {
    await fc.assert(
      fc.asyncProperty(identifier, async (name) => {
        // One column aliased by the quoted name: the field name the server
        // reports must be the original string, byte for byte.
        const result = await client.query(`SELECT 1 AS ${quoteIdent(name)}`, []);
        expect(result.fields.map((f) => f.name)).toEqual([name]);
      }),
      { numRuns: 300 },
    );
  });

  it('neutralises quotes, semicolons, comments and keywords', async () => {
    for (const name of ['a"; DROP TABLE x; --', '"', '""', 'select', 'A', "it's", '/* c */', 'ε']) {
      const result = await client.query(`SELECT 1 AS ${quoteIdent(name)}`, []);
      expect(result.fields[0]?.name).toBe(name);
    }
    expect(quoteIdent('a"b')).toBe('"a""b"');
  });

  it('refuses NUL and the empty string', () => {
    expect(() => quoteIdent('a\0b')).toThrow(TypeError);
    expect(() => quoteIdent('')).toThrow(TypeError);
  });

  it('displays plain lowercase names bare and everything else quoted', () => {
    expect(displayIdent('orders_2024')).toBe('orders_2024');
    expect(displayIdent('Orders')).toBe('"Orders"');
    expect(displayIdent('order items')).toBe('"order items"');
  });
});

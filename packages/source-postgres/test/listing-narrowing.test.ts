import { describe, expect, it } from 'vitest';
import { narrowSchemas } from '../src/listing-narrowing.js';
import { schemaUri, tableUri } from '../src/resource-uri.js';

const allowed = ['public', 'sales', 'sales_eu', 'ünï'];

describe('narrowing a postgres listing to URI prefixes', () => {
  it('keeps schemas whose name starts with a prefix inside the schema segment, with all their tables', () => {
    expect(narrowSchemas('wh', allowed, ['db+postgres:///wh/sal'])).toEqual([
      { schema: 'sales', schemaEntry: true, tables: undefined },
      { schema: 'sales_eu', schemaEntry: true, tables: undefined },
    ]);
  });

  it('keeps one schema and the table names past its slash, never the schema entry alone', () => {
    expect(
      narrowSchemas('wh', allowed, [
        'db+postgres:///wh/sales/ord',
        'db+postgres:///wh/sales/inv',
        'db+postgres:///wh/sales/order_lines/rows',
      ]),
    ).toEqual([{ schema: 'sales', schemaEntry: false, tables: ['inv', 'ord'] }]);
    expect(narrowSchemas('wh', allowed, ['db+postgres:///wh/sales/'])).toEqual([
      { schema: 'sales', schemaEntry: false, tables: undefined },
    ]);
  });

  it('decodes names and cuts a prefix that stops inside an encoded character', () => {
    const uri = tableUri('wh', 'ünï', 'tä');
    expect(narrowSchemas('wh', allowed, [uri])).toEqual([{ schema: 'ünï', schemaEntry: false, tables: ['tä'] }]);
    expect(narrowSchemas('wh', allowed, [schemaUri('wh', 'ünï').slice(0, -2)])).toEqual([
      { schema: 'ünï', schemaEntry: true, tables: undefined },
    ]);
  });

  it('scans everything for a prefix covering the source; keeps nothing outside it or the allowlist', () => {
    expect(narrowSchemas('wh', allowed, ['db+postgres:///wh/'])).toBeUndefined();
    expect(narrowSchemas('wh', allowed, ['db+postgres:///w'])).toBeUndefined();
    expect(narrowSchemas('wh', allowed, ['db+postgres:///other/sales', 'db+postgres:///wh/secret/'])).toEqual([]);
  });

  it('follows the shape of each range: one schema, schema entries only, one table by name', () => {
    expect(
      narrowSchemas('wh', allowed, [
        { prefix: 'db+postgres:///wh/sales', exact: true },
        { prefix: 'db+postgres:///wh/p', depth: 0 },
        { prefix: 'db+postgres:///wh/sales_eu/orders', exact: true },
        { prefix: 'db+postgres:///wh/sales_eu/inv', depth: 0 },
      ]),
    ).toEqual([
      { schema: 'public', schemaEntry: true, tables: [] },
      { schema: 'sales', schemaEntry: true, tables: [] },
      { schema: 'sales_eu', schemaEntry: false, tables: ['inv'], names: ['orders'] },
    ]);
    // A name a prefix already keeps is not asked for again; a deeper range keeps whole schemas.
    expect(
      narrowSchemas('wh', allowed, [
        { prefix: 'db+postgres:///wh/sales/ord', depth: 0 },
        { prefix: 'db+postgres:///wh/sales/orders', exact: true },
        { prefix: 'db+postgres:///wh/ün', depth: 1 },
      ]),
    ).toEqual([
      { schema: 'sales', schemaEntry: false, tables: ['ord'] },
      { schema: 'ünï', schemaEntry: true, tables: undefined },
    ]);
  });
});

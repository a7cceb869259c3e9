import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeSegment } from '../src/resource-uri.js';
import { createFixture, listAll, readText, UNICODE_TABLE, WEIRD_TABLE, type Fixture } from './fixture.js';

const P = 'db+postgres:///crm';
let fx: Fixture;

beforeAll(async () => {
  fx = await createFixture('source');
});
afterAll(async () => {
  await fx?.close();
});

describe('resources/list', () => {
  it('lists each allowed schema, then its tables and views, in catalog order', async () => {
    const page = await fx.source.listResources({ limit: 100 });
    expect(page.nextPosition).toBeUndefined();
    expect(page.items.map((i) => i.uri)).toEqual([
      `${P}/public`,
      `${P}/public/${encodeSegment(WEIRD_TABLE)}`,
      `${P}/public/big_orders`,
      `${P}/public/caf%C3%A9_%C3%BCn%C3%AFcode`,
      `${P}/public/customers`,
      `${P}/public/nokey`,
      `${P}/public/order_lines`,
      `${P}/public/orders`,
      `${P}/sales`,
      `${P}/sales/invoices`,
    ]);
    expect(page.items.some((i) => i.uri.includes('secret'))).toBe(false);
  });

  it('describes resources from COMMENT ON, else with a generated summary', async () => {
    const { items } = await fx.source.listResources({ limit: 100 });
    const byUri = new Map(items.map((i) => [i.uri, i]));
    expect(byUri.get(`${P}/public`)).toMatchObject({
      name: 'public',
      description: 'Core CRM data',
      mimeType: 'text/markdown',
    });
    expect(byUri.get(`${P}/public/customers`)).toMatchObject({
      name: 'public.customers',
      title: 'Table public.customers',
      description: 'People who bought something',
    });
    expect(byUri.get(`${P}/public/orders`)?.description).toBe('Table public.orders, ~30 rows.');
    expect(byUri.get(`${P}/public/big_orders`)).toMatchObject({
      title: 'View public.big_orders',
      description: 'Orders over 100',
    });
    expect(byUri.get(`${P}/sales`)?.description).toMatch(/^Overview of schema sales/);
  });

  it('pages with keyset positions and yields every resource exactly once, whatever the page size', async () => {
    const { uris: all } = await listAll(fx.source, 1000);
    for (const limit of [1, 2, 3, 7, 9, 10]) {
      const { uris, pages } = await listAll(fx.source, limit);
      expect(uris).toEqual(all);
      expect(pages).toBe(Math.ceil(all.length / limit));
    }
  });

  it('keeps pages stable when a table is created between pages', async () => {
    const first = await fx.source.listResources({ limit: 3 });
    await fx.db.sql('CREATE TABLE public.aaa_new (id int)');
    try {
      const second = await fx.source.listResources({ limit: 100, position: first.nextPosition! });
      // The new table sorts before the position: not repeated, nothing skipped.
      expect(second.items.map((i) => i.uri)).not.toContain(`${P}/public/aaa_new`);
      expect([...first.items, ...second.items].map((i) => i.uri)).toContain(`${P}/public/orders`);
    } finally {
      await fx.db.sql('DROP TABLE public.aaa_new');
    }
  });

  it('lists relations whose names fall among the pg_toast entries, in order, on every page size', async () => {
    // The keyset scan reads names between `pg_toast_` and `pg_toast\`` through the row types
    // (relation-keyset.ts): a user relation named there must still be listed, where it sorts.
    await fx.db.sql('CREATE TABLE public.pg_toast_x (id int); CREATE VIEW public."pg_toast_y" AS SELECT 1 AS one');
    try {
      const { uris: all } = await listAll(fx.source, 1000);
      const publicNames = all.filter((u) => u.startsWith(`${P}/public/`)).map((u) => u.slice(`${P}/public/`.length));
      expect(publicNames).toContain('pg_toast_x');
      expect(publicNames).toContain('pg_toast_y');
      expect(publicNames).toEqual([...publicNames].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
      for (const limit of [1, 2, 5]) expect((await listAll(fx.source, limit)).uris).toEqual(all);
    } finally {
      await fx.db.sql('DROP VIEW public.pg_toast_y; DROP TABLE public.pg_toast_x');
    }
  });

  it('refuses positions it did not issue (MCPGW_CURSOR_INVALID)', async () => {
    for (const position of [
      'garbage',
      '[]',
      '["secret",""]',
      '["public"]',
      '[1,2]',
      JSON.stringify(['public', 'x'.repeat(64)]),
    ]) {
      await expect(fx.source.listResources({ limit: 5, position })).rejects.toMatchObject({
        code: 'MCPGW_CURSOR_INVALID',
      });
    }
  });

  it('lists only schemas that exist', async () => {
    const source = fx.make({ schemas: ['nope', 'sales'] }, 'crm2');
    const { items } = await source.listResources({ limit: 10 });
    expect(items.map((i) => i.uri)).toEqual(['db+postgres:///crm2/sales', 'db+postgres:///crm2/sales/invoices']);
  });
});

describe('resources/read', () => {
  it('reads a schema overview: relations, kinds, comments, estimated rows, URIs', async () => {
    const text = await readText(fx.source, `${P}/public`);
    expect(text).toContain('# Schema public');
    expect(text).toContain('Core CRM data');
    expect(text).toMatch(
      /\| customers \| table \| 25 \| People who bought something \| db\+postgres:\/\/\/crm\/public\/customers \|/,
    );
    expect(text).toMatch(/\| big_orders \| view \| {2}\| Orders over 100 \|/);
    expect(text).not.toContain('secret');
  });

  it('reads a table: columns with types, nullability, defaults, comments; keys; indexes; estimate', async () => {
    const text = await readText(fx.source, `${P}/public/customers`);
    expect(text).toContain('# Table public.customers');
    expect(text).toContain('People who bought something');
    expect(text).toContain('- Estimated rows: ~25 rows');
    expect(text).toContain('| 1 | id | bigint | NOT NULL | generated always as identity |  |');
    expect(text).toContain('| 2 | email | text | NOT NULL |  | Login \\| contact address |');
    expect(text).toContain('| 3 | name | text | null |  |  |');
    expect(text).toContain("| 4 | password_hash | text | NOT NULL | 'x'::text |  |");
    expect(text).toContain('| 5 | created_at | timestamp with time zone | NOT NULL | now() |  |');
    expect(text).toMatch(/## Primary key\n\n`PRIMARY KEY \(id\)` \(`customers_pkey`\)/);
    expect(text).toContain('`CREATE UNIQUE INDEX customers_email_key ON public.customers USING btree (email)`');
    // Incoming foreign keys, with a URI only where the other table is published.
    expect(text).toContain('← public.orders — `orders_customer_id_fkey`');
    expect(text).toContain(`(${P}/public/orders)`);
    expect(text).toContain('← sales.invoices');
  });

  it('reads foreign keys, composite keys, check constraints and indexes', async () => {
    const orders = await readText(fx.source, `${P}/public/orders`);
    expect(orders).toContain(
      `→ public.customers — \`orders_customer_id_fkey\`: \`FOREIGN KEY (customer_id) REFERENCES public.customers(id) ON DELETE CASCADE\` (${P}/public/customers)`,
    );
    expect(orders).toContain('`orders_total_check`: `CHECK (total >= 0::numeric)`');
    expect(orders).toContain('CREATE INDEX orders_customer_idx ON public.orders USING btree (customer_id)');
    const lines = await readText(fx.source, `${P}/public/order_lines`);
    expect(lines).toContain('`PRIMARY KEY (order_id, line)`');
  });

  it('reads a view with its definition and no row estimate', async () => {
    const text = await readText(fx.source, `${P}/public/big_orders`);
    expect(text).toContain('# View public.big_orders');
    expect(text).toContain('no row estimate (view)');
    expect(text).toMatch(
      /## Definition\n\n```sql\nSELECT orders.id,\n\s+orders.total\n\s+FROM public.orders\n\s+WHERE orders.total > 100/,
    );
  });

  it('round-trips identifiers with quotes, semicolons, slashes, percent and unicode', async () => {
    const weird = await readText(fx.source, `${P}/public/${encodeSegment(WEIRD_TABLE)}`);
    expect(weird).toContain('# Table public."Order ""Items""; -- x/y?z#%"');
    expect(weird).toContain('| 2 | "we,ird col" | text |');
    const unicode = await readText(fx.source, `${P}/public/${encodeSegment(UNICODE_TABLE)}`);
    expect(unicode).toContain(`# Table public."${UNICODE_TABLE}"`);
  });

  it('returns contents with the requested URI and text/markdown', async () => {
    expect(await fx.source.read(`${P}/sales/invoices`)).toEqual([
      {
        uri: `${P}/sales/invoices`,
        mimeType: 'text/markdown',
        text: expect.stringContaining('# Table sales.invoices'),
      },
    ]);
  });

  it('answers not found (undefined) for missing tables, schemas and rows when disabled', async () => {
    for (const uri of [
      `${P}/public/missing`,
      `${P}/nope`,
      `${P}/secret`,
      `${P}/secret/keys`,
      `${P}/public/orders/rows`,
      `${P}/public/Orders`,
    ]) {
      expect(await fx.source.read(uri), uri).toBeUndefined();
    }
  });

  it('owns exactly its prefix', () => {
    expect(fx.source.owns(`${P}/public`)).toBe(true);
    expect(fx.source.owns('db+postgres:///crm2/public')).toBe(false);
    expect(fx.source.owns('db+postgres:///crm')).toBe(false);
    expect(fx.source.owns('postgres://crm/public')).toBe(false);
  });
});

describe('resources/templates/list', () => {
  it('offers the table template, and the rows template only when rows are enabled', async () => {
    expect(await fx.source.listTemplates()).toEqual([
      expect.objectContaining({ uriTemplate: `${P}/{schema}/{table}`, name: 'crm-table', mimeType: 'text/markdown' }),
    ]);
    const withRows = fx.make({ rows: { enabled: true, maxLimit: 10 } }, 'crm3');
    const templates = await withRows.listTemplates();
    expect(templates.map((t) => t.uriTemplate)).toEqual([
      'db+postgres:///crm3/{schema}/{table}',
      'db+postgres:///crm3/{schema}/{table}/rows{?limit,after,columns}',
    ]);
    expect(templates[1]?.description).toContain('Up to 10 rows');
  });
});

describe('health and close', () => {
  it('reports ok while the database answers, and close() ends the pool', async () => {
    const source = fx.make({}, 'crm4');
    expect(await source.health()).toEqual({ ok: true });
    await source.close();
    await source.close();
    await expect(source.listResources({ limit: 1 })).rejects.toMatchObject({ code: 'MCPGW_SOURCE_UNAVAILABLE' });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeSegment } from '../src/resource-uri.js';
import { ROWS_MAX_BYTES } from '../src/read-rows.js';
import { createFixture, readText, WEIRD_TABLE, type Fixture } from './fixture.js';

const P = 'db+postgres:///crm';
let fx: Fixture;

interface RowsDoc {
  schema: string;
  table: string;
  columns: string[];
  orderBy: string[];
  limit: number;
  rows: Array<Record<string, unknown>>;
  next?: string;
  note?: string;
}

async function rows(uri: string): Promise<RowsDoc> {
  return JSON.parse(await readText(fx.source, uri)) as RowsDoc;
}

beforeAll(async () => {
  fx = await createFixture('rows', {
    rows: { enabled: true, maxLimit: 10, columns: { exclude: [{ table: 'customers', column: 'password_hash' }] } },
  });
});
afterAll(async () => {
  await fx?.close();
});

describe('rows template', () => {
  it('returns rows as JSON ordered by primary key, limit defaulting to rows.maxLimit', async () => {
    const contents = await fx.source.read(`${P}/public/orders/rows`);
    expect(contents?.[0]?.mimeType).toBe('application/json');
    const doc = await rows(`${P}/public/orders/rows`);
    expect(doc).toMatchObject({ schema: 'public', table: 'orders', orderBy: ['id'], limit: 10 });
    expect(doc.rows.map((r) => r.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(doc.next).toMatch(/^db\+postgres:\/\/\/crm\/public\/orders\/rows\?limit=10&after=[A-Za-z0-9_-]+$/);
  });

  it('keeps bigint and numeric values exact (no float rounding)', async () => {
    const text = await readText(fx.source, `${P}/public/orders/rows?limit=1`);
    expect(text).toContain('"big":9007199254740993');
    expect(text).toContain('"total":10.00');
  });

  it('pages through every row exactly once by following next, with a composite key', async () => {
    const seen: string[] = [];
    let uri: string | undefined = `${P}/public/order_lines/rows?limit=4`;
    let pages = 0;
    while (uri !== undefined && pages < 20) {
      const doc = await rows(uri);
      seen.push(...doc.rows.map((r) => `${String(r.order_id)}-${String(r.line)}`));
      uri = doc.next;
      pages++;
    }
    expect(pages).toBe(4);
    expect(seen).toHaveLength(15);
    expect(new Set(seen).size).toBe(15);
    expect(seen.slice(0, 4)).toEqual(['1-1', '1-2', '1-3', '2-1']);
  });

  it('restricts columns and carries the restriction into next', async () => {
    const doc = await rows(`${P}/public/customers/rows?limit=2&columns=email,id`);
    expect(doc.columns).toEqual(['email', 'id']);
    expect(Object.keys(doc.rows[0] ?? {})).toEqual(['email', 'id']);
    expect(doc.next).toMatch(/&columns=email,id$/);
    const second = await rows(doc.next!);
    expect(second.rows.map((r) => r.id)).toEqual([3, 4]);
  });

  it('round-trips percent-encoded table and column names', async () => {
    const uri = `${P}/public/${encodeSegment(WEIRD_TABLE)}/rows?columns=${encodeSegment('we,ird col')}`;
    const doc = await rows(uri);
    expect(doc.rows).toEqual([{ 'we,ird col': 'a' }, { 'we,ird col': 'b' }]);
  });

  it('never returns excluded columns, and refuses to select them', async () => {
    const doc = await rows(`${P}/public/customers/rows?limit=1`);
    expect(doc.columns).not.toContain('password_hash');
    expect(Object.keys(doc.rows[0] ?? {})).not.toContain('password_hash');
    await expect(fx.source.read(`${P}/public/customers/rows?columns=password_hash`)).rejects.toMatchObject({
      code: 'MCPGW_INPUT_INVALID',
    });
  });

  it('returns the first page only, with a note, for a relation without primary key', async () => {
    const doc = await rows(`${P}/public/nokey/rows?limit=3`);
    expect(doc.rows).toHaveLength(3);
    expect(doc.orderBy).toEqual([]);
    expect(doc.next).toBeUndefined();
    expect(doc.note).toMatch(/primary key/);
    const view = await rows(`${P}/public/big_orders/rows?limit=2`);
    expect(view.rows).toHaveLength(2);
  });

  it('refuses bad limits, unknown parameters, repeats and foreign positions with MCPGW_INPUT_INVALID', async () => {
    const bad = [
      'limit=0',
      'limit=11',
      'limit=-1',
      'limit=1e1',
      'limit=abc',
      'limit=',
      'limit',
      'limit=1&limit=2',
      'sql=select',
      'columns=nope',
      'columns=id,id',
      'columns=',
      'after=!!!',
      'after=WyIxIl0=',
      `after=${Buffer.from('["1","2"]').toString('base64url')}`,
      `after=${Buffer.from('["not-a-number"]').toString('base64url')}`,
      `after=${Buffer.from('{"a":1}').toString('base64url')}`,
      '',
    ];
    for (const q of bad) {
      await expect(fx.source.read(`${P}/public/orders/rows?${q}`), q).rejects.toMatchObject({
        code: 'MCPGW_INPUT_INVALID',
      });
    }
  });

  it('cuts a page at the size limit and refuses a single oversized row', async () => {
    await fx.db.sql(
      `CREATE TABLE public.blobs (id int PRIMARY KEY, body text);
       INSERT INTO public.blobs SELECT g, repeat('x', ${Math.floor(ROWS_MAX_BYTES / 4)}) FROM generate_series(1, 5) g;
       INSERT INTO public.blobs VALUES (6, repeat('y', ${ROWS_MAX_BYTES + 10}));`,
    );
    const doc = await rows(`${P}/public/blobs/rows?limit=10`);
    expect(doc.rows.map((r) => r.id)).toEqual([1, 2, 3]);
    expect(doc.next).toBeDefined();
    const rest = await rows(doc.next!);
    expect(rest.rows.map((r) => r.id)).toEqual([4, 5]);
    await expect(fx.source.read(rest.next!)).rejects.toMatchObject({ code: 'MCPGW_RESOURCE_TOO_LARGE' });
  });
});

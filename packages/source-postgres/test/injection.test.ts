import { isGatewayError } from '@mcpgw/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFixture, type Fixture } from './fixture.js';

/**
 * Injection attempts through URIs and template variables
 * get -32602. For a source that means `read()` resolves `undefined` (not
 * found) or throws MCPGW_INPUT_INVALID; never a backend error (-32603), never
 * data from outside the allowlist, and nothing in the database changes.
 */
const P = 'db+postgres:///crm';
let fx: Fixture;

beforeAll(async () => {
  fx = await createFixture('inject', { rows: { enabled: true, maxLimit: 10 } });
  await fx.db.sql(`CREATE TABLE public.canary (id int PRIMARY KEY); INSERT INTO public.canary VALUES (1)`);
});
afterAll(async () => {
  await fx?.close();
});

/** Resolves to 'not-found', 'invalid-input' or the content; anything else fails the test. */
async function outcome(uri: string): Promise<string> {
  try {
    const contents = await fx.source.read(uri);
    if (contents === undefined) return 'not-found';
    const first = contents[0];
    return first !== undefined && 'text' in first ? first.text : 'blob';
  } catch (error) {
    if (isGatewayError(error) && error.code === 'MCPGW_INPUT_INVALID') return 'invalid-input';
    throw error;
  }
}

const enc = encodeURIComponent;
const payloads = [
  "orders'; DROP TABLE public.canary; --",
  'orders; DROP TABLE public.canary',
  'orders" ; DROP TABLE public.canary; --',
  'orders/*',
  'orders -- x',
  "' OR '1'='1",
  'orders\u0000',
  'ordеrs', // Cyrillic е: a homoglyph of "orders"
  'ORDERS',
  'orders ',
  '..',
  '.',
  'pg_class',
  'x'.repeat(64),
];

describe('injection through URIs', () => {
  it('treats hostile table names as names that do not exist', async () => {
    for (const p of payloads) {
      // Canonical encoding (what a template expansion sends) and raw text.
      for (const uri of [
        `${P}/public/${enc(p).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`,
        `${P}/public/${p}`,
      ]) {
        expect(await outcome(uri), uri).toBe('not-found');
      }
    }
  });

  it('treats hostile schema names, system schemas and schemas outside the allowlist as not found', async () => {
    for (const schema of [
      ...payloads,
      'secret',
      'pg_catalog',
      'information_schema',
      'pg_toast',
      'PUBLIC',
      'public%00',
    ]) {
      for (const suffix of ['', '/pg_class', '/keys', '/tables', '/orders']) {
        expect(await outcome(`${P}/${enc(schema)}${suffix}`), schema + suffix).toBe('not-found');
      }
    }
  });

  it('refuses malformed, non-canonical and traversal URIs', async () => {
    const uris = [
      `${P}/public/%6Frders`, // non-canonical spelling of "orders"
      `${P}/public/%6frders`,
      `${P}/public/orders%`,
      `${P}/public/orders%2`,
      `${P}/public/%C3%28`, // invalid UTF-8
      `${P}/public/%00`,
      `${P}/public/../secret/keys`,
      `${P}/public/./orders`,
      `${P}/public//orders`,
      `${P}/public/orders/`,
      `${P}/public/`,
      `${P}//public/orders`,
      `${P}/public/orders#x`,
      `${P}/public/orders?x=1`,
      `${P}/public?x=1`,
      `${P}/public/orders/columns`,
      `${P}/public/orders/rows/extra`,
      `${P}/public/orders/rows#frag`,
      `${P}/secret/keys/rows`,
      `${P}/pg_catalog/pg_authid/rows`,
      `${P}/information_schema/tables/rows`,
      'db+postgres:///crm',
      'db+postgres://evil/crm/public/orders',
    ];
    for (const uri of uris) expect(await outcome(uri), uri).toBe('not-found');
  });

  it('refuses hostile rows parameters as invalid input', async () => {
    const queries = [
      `columns=${enc('id); DROP TABLE public.canary; --')}`,
      `columns=${enc('id" FROM public.canary; --')}`,
      `columns=${enc('(SELECT 1)')}`,
      'columns=*',
      'columns=id%00',
      `columns=${enc('ctid')}`,
      'limit=1;DROP',
      'limit=1%20OR%201=1',
      `after=${Buffer.from(JSON.stringify(["1'); DROP TABLE public.canary; --"])).toString('base64url')}`,
      `after=${Buffer.from(JSON.stringify(['1\u0000'])).toString('base64url')}`,
      'order=id;DROP',
    ];
    for (const q of queries) expect(await outcome(`${P}/public/orders/rows?${q}`), q).toBe('invalid-input');
  });

  it('left the database untouched', async () => {
    const { rows } = await fx.db.sql('SELECT count(*)::int AS n FROM public.canary');
    expect(rows[0]).toEqual({ n: 1 });
  });

  it('reads a table whose name is itself an injection payload, exactly', async () => {
    const name = "x'); DROP TABLE public.canary; --";
    await fx.db.sql(`CREATE TABLE public."${name}" (id int PRIMARY KEY); INSERT INTO public."${name}" VALUES (7)`);
    const table = `${P}/public/x%27%29%3B%20DROP%20TABLE%20public.canary%3B%20--`;
    expect(await outcome(table)).toContain('# Table public."x\'); DROP TABLE public.canary; --"');
    expect(JSON.parse(await outcome(`${table}/rows`))).toMatchObject({ rows: [{ id: 7 }] });
    const { rows } = await fx.db.sql('SELECT count(*)::int AS n FROM public.canary');
    expect(rows[0]).toEqual({ n: 1 });
  });
});

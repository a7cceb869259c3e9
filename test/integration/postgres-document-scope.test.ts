import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '@mcpgw/core';
import { createCatalog } from '@mcpgw/catalog';
import type { Grant } from '@mcpgw/policy';
import { resolveAccess } from '@mcpgw/policy';
import { createCursorCodec, type ResourceService } from '@mcpgw/protocol';
import { createFixture, type Fixture } from '../../packages/source-postgres/test/fixture.js';

// Postgres documents for a narrowly granted caller, through the real catalog
// and policy: the schema overview, a table's keys, defaults, constraints,
// indexes and view definition, and the templates mention only resources in
// the caller's set, and nothing outside the source's schema allowlist ever
// appears, whoever asks. Every hidden object carries "canary" in its name or
// comment.

const P = 'db+postgres:///crm';
const signal = new AbortController().signal;
const principal: Principal = {
  issuer: 'https://idp.test',
  subject: 'alice',
  scopes: ['analyst'],
  groups: [],
  expiresAt: 0,
};
/** What the narrow caller is granted: the public overview and four relations. */
const NARROW = [
  'public',
  'public/customers',
  'public/orders',
  'public/lookout',
  'public/lookout_view',
  'public/lookout_calls',
].map((path) => `${P}/${path}`);

let fx: Fixture;

beforeAll(async () => {
  fx = await createFixture('doc_scope', { changeDetection: { mode: 'off' } });
  await fx.db.sql(`
    CREATE SCHEMA canary_schema;
    COMMENT ON SCHEMA canary_schema IS 'CANARY schema comment';
    CREATE TABLE canary_schema.canary_outside (id int PRIMARY KEY, customer_id bigint REFERENCES public.customers(id));
    COMMENT ON TABLE canary_schema.canary_outside IS 'CANARY comment outside';
    CREATE FUNCTION canary_schema.canary_fn(int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT $1';
    CREATE TYPE canary_schema.canary_mood AS ENUM ('a');
    CREATE SEQUENCE canary_schema.canary_seq;
    CREATE TABLE public.canary_inside (id int PRIMARY KEY, order_id int REFERENCES public.orders(id));
    COMMENT ON TABLE public.canary_inside IS 'CANARY comment inside';
    COMMENT ON TABLE sales.invoices IS 'CANARY comment in a schema the caller may not see';
    CREATE TABLE public.lookout (
      id int PRIMARY KEY DEFAULT nextval('canary_schema.canary_seq'),
      inside_id int REFERENCES public.canary_inside(id),
      outside_id int REFERENCES canary_schema.canary_outside(id),
      customer_id bigint REFERENCES public.customers(id),
      mood canary_schema.canary_mood,
      moods canary_schema.canary_mood[],
      n int DEFAULT canary_schema.canary_fn(1) CHECK (canary_schema.canary_fn(n) > 0)
    );
    CREATE INDEX lookout_expr_idx ON public.lookout (canary_schema.canary_fn(n));
    CREATE VIEW public.lookout_view AS SELECT i.id FROM public.canary_inside i;
    CREATE VIEW public.lookout_calls AS SELECT canary_schema.canary_fn(o.id) AS v FROM public.orders o;
    ANALYZE;
  `);
});
afterAll(async () => {
  await fx?.close();
});

function serviceFor(uris: string[] | undefined): ResourceService {
  const grants: Grant[] = [{ name: 'analyst', match: { scopes: ['analyst'] }, allow: [{ source: 'crm', uris }] }];
  const catalog = createCatalog({
    tenantId: 'acme',
    sources: [fx.source],
    cursors: createCursorCodec({ key: Buffer.from('s'.repeat(32)) }),
  });
  return catalog.forScope(resolveAccess('acme', principal, grants));
}

/** Every answer the caller can get: all list pages, templates, and a read of every listed URI. */
async function everything(service: ResourceService): Promise<{ answers: string; docs: Map<string, string> }> {
  const answers: unknown[] = [];
  const uris: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await service.listResources(cursor, signal);
    answers.push(page);
    uris.push(...page.resources.map((r) => r.uri));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  answers.push(await service.listTemplates(undefined, signal));
  const docs = new Map<string, string>();
  for (const uri of uris) {
    const outcome = await service.read(uri, signal);
    answers.push(outcome);
    const first = outcome?.contents[0];
    if (first !== undefined && 'text' in first) docs.set(uri, first.text);
  }
  return { answers: JSON.stringify(answers), docs };
}

describe('Postgres documents for a narrowly granted caller', () => {
  it('mention nothing outside the caller’s set, in any list, template or read', async () => {
    const { answers, docs } = await everything(serviceFor(NARROW));
    expect([...docs.keys()].sort()).toEqual([...NARROW].sort());
    for (const canary of [/canary/i, /invoices/, /sales/, /secret/, /order_lines/, /big_orders/]) {
      expect(answers).not.toMatch(canary);
    }
  });

  it('lists only the visible relations in the schema overview, and counts nothing else', async () => {
    const overview = (await everything(serviceFor(NARROW))).docs.get(`${P}/public`) ?? '';
    const names = [...overview.matchAll(/^\| ([^|]+) \|/gm)].map((m) => m[1]?.trim()).slice(2);
    expect(names).toEqual(['customers', 'lookout', 'lookout_calls', 'lookout_view', 'orders']);
    expect(overview).not.toContain('more.');
  });

  it('keeps what may be shown: a visible key target, its own columns, and placeholders for the rest', async () => {
    const { docs } = await everything(serviceFor(NARROW));
    const lookout = docs.get(`${P}/public/lookout`) ?? '';
    expect(lookout).toContain(`→ public.customers — \`lookout_customer_id_fkey\``);
    expect(lookout).toContain('→ a table you may not see — `lookout_inside_id_fkey`: `FOREIGN KEY (inside_id)`');
    expect(lookout).toContain('→ a table you may not see — `lookout_outside_id_fkey`: `FOREIGN KEY (outside_id)`');
    expect(lookout).toContain('| mood | (a type outside what you may see) |');
    expect(lookout).toContain('`lookout_expr_idx`: (refers to objects outside what you may see)');
    expect(docs.get(`${P}/public/customers`)).toContain('← public.lookout — `lookout_customer_id_fkey`');
    expect(docs.get(`${P}/public/lookout_view`)).toContain('Not shown: the query refers to objects outside');
    expect(docs.get(`${P}/public/lookout_calls`)).toContain('Not shown: the query refers to objects outside');
  });

  it('still describes the allowed schemas in full to a caller granted the whole source, and never the others', async () => {
    const { answers, docs } = await everything(serviceFor(undefined));
    expect(docs.get(`${P}/public`)).toContain('| canary_inside |');
    expect(docs.get(`${P}/public/orders`)).toContain('← public.canary_inside');
    expect(docs.get(`${P}/public/customers`)).toContain('← sales.invoices');
    expect(docs.get(`${P}/public/lookout_view`)).toContain('FROM public.canary_inside');
    expect(docs.get(`${P}/public/lookout`)).toContain('→ public.canary_inside');
    for (const canary of [
      'canary_schema',
      'canary_outside',
      'canary_fn',
      'canary_mood',
      'canary_seq',
      'CANARY schema',
      'secret',
    ]) {
      expect(answers).not.toContain(canary);
    }
  });
});

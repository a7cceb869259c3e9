import { silentLogger, type Logger, type Source } from '@mcpgw/core';
import { createTestDatabase, type TestDatabase } from '@mcpgw/test-helpers/postgres';
import { createPostgresSource } from '../src/postgres-source.js';
import { postgresSourceOptionsSchema, type PostgresSourceConfig } from '../src/postgres-source-options.js';

/** Names chosen to break naive quoting and encoding. */
export const WEIRD_TABLE = 'Order "Items"; -- x/y?z#%';
export const UNICODE_TABLE = 'café_ünïcode';

/**
 * The fixture database: schema `public` and `sales` (allowed by default),
 * `secret` (never allowed), tables with comments, keys, indexes and a view.
 */
export const FIXTURE_SQL = `
  COMMENT ON SCHEMA public IS 'Core CRM data';
  CREATE TABLE public.customers (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email text NOT NULL UNIQUE,
    name text,
    password_hash text NOT NULL DEFAULT 'x',
    created_at timestamptz NOT NULL DEFAULT now()
  );
  COMMENT ON TABLE public.customers IS 'People who bought something';
  COMMENT ON COLUMN public.customers.email IS 'Login | contact address';
  CREATE TABLE public.orders (
    id integer PRIMARY KEY,
    customer_id bigint NOT NULL REFERENCES public.customers(id) ON DELETE CASCADE,
    total numeric(12,2) CHECK (total >= 0),
    big bigint
  );
  CREATE INDEX orders_customer_idx ON public.orders (customer_id);
  CREATE TABLE public.order_lines (
    order_id integer NOT NULL REFERENCES public.orders(id),
    line integer NOT NULL,
    sku text NOT NULL,
    PRIMARY KEY (order_id, line)
  );
  CREATE VIEW public.big_orders AS SELECT id, total FROM public.orders WHERE total > 100;
  COMMENT ON VIEW public.big_orders IS 'Orders over 100';
  CREATE TABLE public."${WEIRD_TABLE.replaceAll('"', '""')}" (id int PRIMARY KEY, "we,ird col" text);
  CREATE TABLE public."${UNICODE_TABLE}" (id int PRIMARY KEY);
  CREATE TABLE public.nokey (v text);
  CREATE SCHEMA sales;
  CREATE TABLE sales.invoices (no text PRIMARY KEY, customer_id bigint REFERENCES public.customers(id));
  CREATE SCHEMA secret;
  CREATE TABLE secret.keys (k text);
  INSERT INTO public.customers (email, name) SELECT 'c' || g || '@example.com', 'Customer ' || g FROM generate_series(1, 25) g;
  INSERT INTO public.orders SELECT g, 1 + g % 25, g * 10, 9007199254740993 FROM generate_series(1, 30) g;
  INSERT INTO public.order_lines SELECT o, l, 'sku-' || o || '-' || l FROM generate_series(1, 5) o, generate_series(1, 3) l;
  INSERT INTO public.nokey SELECT 'v' || g FROM generate_series(1, 7) g;
  INSERT INTO public."${WEIRD_TABLE.replaceAll('"', '""')}" VALUES (1, 'a'), (2, 'b');
  ANALYZE;
`;

export interface Fixture {
  db: TestDatabase;
  source: Source;
  /** Another source over the same database with different options. */
  make(options?: Partial<PostgresSourceConfig>, id?: string): Source;
  close(): Promise<void>;
}

/** Creates the fixture database and a source `crm` over schemas public and sales. */
export async function createFixture(label: string, options: Partial<PostgresSourceConfig> = {}): Promise<Fixture> {
  const db = await createTestDatabase(label);
  await db.sql(FIXTURE_SQL);
  const made: Source[] = [];
  const make = (extra: Partial<PostgresSourceConfig> = {}, id = 'crm') => {
    const parsed = postgresSourceOptionsSchema.parse({
      connection: { url: db.url },
      schemas: ['public', 'sales'],
      ...extra,
    });
    const source = createPostgresSource(parsed, id, process.env.DEBUG_PG ? debugLogger : silentLogger);
    made.push(source);
    return source;
  };
  const source = make(options);
  return {
    db,
    source,
    make,
    async close() {
      await Promise.all(made.map((s) => s.close()));
      await db.drop();
    },
  };
}

/** Reads a URI and returns its single text content (fails the test otherwise). */
export async function readText(source: Source, uri: string): Promise<string> {
  const contents = await source.read(uri);
  if (contents === undefined) throw new Error(`not found: ${uri}`);
  if (contents.length !== 1) throw new Error(`expected one content, got ${contents.length}`);
  const [first] = contents;
  if (first === undefined || !('text' in first)) throw new Error('expected text contents');
  return first.text;
}

/** Every descriptor, page by page. */
export async function listAll(source: Source, limit: number): Promise<{ uris: string[]; pages: number }> {
  const uris: string[] = [];
  let position: string | undefined;
  let pages = 0;
  for (let guard = 0; guard < 10_000; guard++) {
    const page = await source.listResources(position === undefined ? { limit } : { limit, position });
    pages++;
    uris.push(...page.items.map((i) => i.uri));
    if (page.nextPosition === undefined) return { uris, pages };
    position = page.nextPosition;
  }
  throw new Error('listing did not end');
}

const debugLogger: Logger = {
  debug: (o, m) => console.log('debug', m, o),
  info: (o, m) => console.log('info', m, o),
  warn: (o, m) => console.log('warn', m, o),
  error: (o, m) => console.log('error', m, o),
  child: () => debugLogger,
};

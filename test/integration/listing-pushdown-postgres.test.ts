import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AccessScope, Principal, Source } from '@mcpgw/core';
import { silentLogger } from '@mcpgw/core';
import { createCatalog } from '@mcpgw/catalog';
import { resolveAccess } from '@mcpgw/policy';
import { createCursorCodec } from '@mcpgw/protocol';
import { createPostgresSource, postgresSourceOptionsSchema } from '@mcpgw/source-postgres';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';

// An analyst granted one schema of a warehouse lists it in one
// request, and no catalog query the listing makes names or scans another
// schema (recorded at the driver: every statement and its parameters).

const SCHEMAS = Array.from({ length: 30 }, (_, i) => `s${String(i).padStart(2, '0')}`);
const TABLES = 20;
const signal = new AbortController().signal;
const cursors = createCursorCodec({ key: Buffer.from('q'.repeat(32)) });
const caller: Principal = { issuer: 'https://idp', subject: 'ann', scopes: [], groups: [], expiresAt: 0 };

let db: TestDatabase;
let source: Source;
/** Namespace oid of each schema, to recognise one among query parameters. */
let oids: Map<string, string>;

function scopeOf(patterns: readonly string[]): AccessScope {
  return resolveAccess('acme', caller, [{ name: 'g', match: {}, allow: [{ source: 'wh', uris: patterns }] }]);
}

/** Every statement (text and parameters) the driver sends while `work` runs. */
async function recordQueries<T>(work: () => Promise<T>): Promise<{ result: T; queries: Array<[string, unknown[]]> }> {
  const queries: Array<[string, unknown[]]> = [];
  const original = pg.Client.prototype.query;
  const spy = vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
    // The source sends `{ text, values, queryMode }` objects; plain strings carry no parameters.
    const [first, second] = args;
    const config =
      typeof first === 'object' && first !== null ? (first as { text: string; values?: unknown[] }) : undefined;
    const values = config?.values ?? (Array.isArray(second) ? second : []);
    queries.push([config?.text ?? String(first), values]);
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original);
  try {
    return { result: await work(), queries };
  } finally {
    spy.mockRestore();
  }
}

async function pagesOf(scope: AccessScope, maxSourceCallsPerPage = 10): Promise<string[][]> {
  const service = createCatalog({ tenantId: 'acme', sources: [source], cursors, maxSourceCallsPerPage }).forScope(
    scope,
  );
  const pages: string[][] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard < 100; guard += 1) {
    const page = await service.listResources(cursor, signal);
    pages.push(page.resources.map((r) => r.uri));
    cursor = page.nextCursor;
    if (cursor === undefined) return pages;
  }
  throw new Error('listing did not end');
}

/** Names and oids of schemas other than `granted` that appear among the parameters. */
function otherSchemasIn(queries: Array<[string, unknown[]]>, granted: readonly string[]): string[] {
  const others = SCHEMAS.filter((s) => !granted.includes(s));
  const seen = new Set<string>();
  for (const [, values] of queries) {
    for (const value of values.flat()) {
      for (const schema of others) {
        if (value === schema || String(value) === oids.get(schema)) seen.add(schema);
      }
    }
  }
  return [...seen];
}

beforeAll(async () => {
  db = await createTestDatabase('pushdown');
  const ddl = SCHEMAS.map(
    (schema) =>
      `CREATE SCHEMA ${schema};` +
      Array.from({ length: TABLES }, (_, t) => `CREATE TABLE ${schema}.t${String(t).padStart(2, '0')} (id int);`).join(
        '',
      ),
  ).join('\n');
  await db.sql(ddl);
  const rows = await db.sql(
    `SELECT nspname::text AS name, oid::text AS oid FROM pg_namespace WHERE nspname LIKE 's__'`,
  );
  oids = new Map(rows.rows.map((r: { name: string; oid: string }) => [r.name, r.oid]));
  const options = postgresSourceOptionsSchema.parse({ connection: { url: db.url }, schemas: SCHEMAS });
  source = createPostgresSource(options, 'wh', silentLogger);
}, 120_000);

afterAll(async () => {
  await source?.close();
  await db?.drop();
});

describe('Postgres listing narrowed to the caller grants', () => {
  it('lists one granted schema in one request without touching the others', async () => {
    const scope = scopeOf(['db+postgres:///wh/s07', 'db+postgres:///wh/s07/*']);
    const { result: pages, queries } = await recordQueries(() => pagesOf(scope));
    expect(pages).toHaveLength(1);
    expect(pages[0]).toHaveLength(1 + TABLES);
    expect(pages[0]?.[0]).toBe('db+postgres:///wh/s07');
    expect(queries.some(([text]) => text.includes('pg_class'))).toBe(true);
    expect(otherSchemasIn(queries, ['s07'])).toEqual([]);
    // The same resources as today's full scan filtered afterwards.
    const today = await pagesOf({ fingerprint: 'x', allowsSource: scope.allowsSource, allows: scope.allows }, 100);
    expect(today.flat()).toEqual(pages.flat());
  });

  it('narrows to table names within a schema, and two schemas keep their order', async () => {
    const scope = scopeOf(['db+postgres:///wh/s12/t1*', 'db+postgres:///wh/s03/**']);
    const { result: pages, queries } = await recordQueries(() => pagesOf(scope));
    expect(pages.flat()).toEqual([
      ...Array.from({ length: TABLES }, (_, t) => `db+postgres:///wh/s03/t${String(t).padStart(2, '0')}`),
      ...Array.from({ length: 10 }, (_, t) => `db+postgres:///wh/s12/t1${t}`),
    ]);
    expect(otherSchemasIn(queries, ['s03', 's12'])).toEqual([]);
  });

  it('pages a narrowed listing without gaps (page size smaller than the view)', async () => {
    const scope = scopeOf(['db+postgres:///wh/s2**']);
    const service = createCatalog({ tenantId: 'acme', sources: [source], cursors, pageSize: 7 }).forScope(scope);
    const uris: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await service.listResources(cursor, signal);
      expect(page.resources.length).toBeGreaterThan(0);
      uris.push(...page.resources.map((r) => r.uri));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    const full = (await pagesOf({ fingerprint: 'all', allowsSource: () => true, allows: () => true }, 100)).flat();
    expect(uris).toEqual(full.filter((uri) => scope.allows('wh', uri)));
    expect(uris).toHaveLength(10 * (1 + TABLES));
  });

  it('asks for a named schema and a named table only, one relation query for the table', async () => {
    // Neighbours that a prefix would keep: s03/t05 also starts t05x; s07 also starts s07x (not allowed).
    await db.sql('CREATE TABLE s03.t05x (id int)');
    try {
      const scope = scopeOf(['db+postgres:///wh/s07', 'db+postgres:///wh/s03/t05', 'db+postgres:///wh/s1*']);
      const { result: pages, queries } = await recordQueries(() => pagesOf(scope));
      expect(pages).toEqual([
        [
          'db+postgres:///wh/s03/t05',
          'db+postgres:///wh/s07',
          ...Array.from({ length: 10 }, (_, i) => `db+postgres:///wh/s1${i}`),
        ],
      ]);
      // One relation query (s03's, for t05 by name); the schema entries need none.
      const relationQueries = queries.filter(([text]) => text.includes('pg_class') && text.includes('LIMIT'));
      expect(relationQueries).toHaveLength(1);
      expect(relationQueries[0]?.[1]).toContainEqual(['t05']);
      expect(otherSchemasIn(queries, ['s03', 's07', ...SCHEMAS.filter((x) => x.startsWith('s1'))])).toEqual([]);
    } finally {
      await db.sql('DROP TABLE s03.t05x');
    }
  });

  it('records other schemas when the listing is not narrowed (the check can fail)', async () => {
    const scope = scopeOf(['db+postgres:///wh/s07', 'db+postgres:///wh/s07/*']);
    const { queries } = await recordQueries(() =>
      pagesOf({ fingerprint: 'y', allowsSource: scope.allowsSource, allows: scope.allows }),
    );
    expect(otherSchemasIn(queries, ['s07']).length).toBeGreaterThan(0);
  });
});

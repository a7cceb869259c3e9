import { GatewayError } from '@mcpgw/core';
import { listColumns, primaryKeyColumns, type RelationRow } from './catalog-queries.js';
import type { ExcludedColumn } from './postgres-source-options.js';
import { quoteIdent } from './quote-ident.js';
import type { RunQuery } from './read-only-transaction.js';
import { sqlState } from './source-unavailable.js';
import { formatRowsQuery, type RowsQuery } from './rows-query.js';

/**
 * The most text one rows read returns. Rows are cut at this size (the page
 * ends early, with a `next` link); a single row larger than this is
 * ERR_TOO_LARGE. Keeps one read from pulling megabytes of blobs into the
 * gateway and into a model's context.
 */
export const ROWS_MAX_BYTES = 1024 * 1024;
/**
 * Rows per FETCH of a rows read: the first batch, and the most of any. Later
 * batches are sized from the rows seen so far to end near the cap, because
 * the server builds the JSON of every row a FETCH asks for, even those past
 * the cap that it then does not send.
 */
const ROWS_FIRST_FETCH = 8;
const ROWS_MAX_FETCH = 100;
/** The rows read's cursor; it lives only in its read-only transaction. */
const ROWS_CURSOR = 'mcpgw_rows';

export interface RowsPage {
  /** The JSON document (README.md, "Rows"). */
  text: string;
}

/** Whether `column` of `schema.table` is hidden by `rows.columns.exclude`. */
export function isExcluded(exclude: readonly ExcludedColumn[], schema: string, table: string, column: string): boolean {
  return exclude.some(
    (e) =>
      e.column === column &&
      (e.schema === undefined || e.schema === schema) &&
      (e.table === undefined || e.table === table),
  );
}

/**
 * One page of rows of a relation already found in the catalog. Identifiers in
 * the SQL are catalog names (the relation's and its columns', after the
 * caller's choice was checked against them), quoted by `quoteIdent`; values
 * (limit, keyset position) are parameters.
 */
export async function readRows(
  query: RunQuery,
  relation: RelationRow,
  request: RowsQuery,
  exclude: readonly ExcludedColumn[],
  baseUri: string,
): Promise<RowsPage> {
  const visible = (await listColumns(query, relation.oid))
    .map((c) => c.name)
    .filter((name) => !isExcluded(exclude, relation.schema, relation.name, name));
  const visibleSet = new Set(visible);
  if (request.columns?.some((c) => !visibleSet.has(c))) {
    throw new GatewayError(
      'ERR_INVALID_INPUT',
      'columns names a column this table does not have (or does not publish)',
    );
  }
  const selected = request.columns ?? visible;
  const primaryKey = await primaryKeyColumns(query, relation.oid);
  // Keyset pagination needs the whole primary key, and the position would
  // reveal hidden key values: without a fully visible key, one page only.
  const keys = primaryKey.length > 0 && primaryKey.every((k) => visibleSet.has(k)) ? primaryKey : [];
  if (request.after !== undefined && request.after.length !== keys.length) {
    throw new GatewayError('ERR_INVALID_INPUT', 'after is not a position this table issued');
  }

  const t = 't';
  const col = (name: string) => `${t}.${quoteIdent(name)}`;
  const values: unknown[] = [];
  const param = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  const keyList = keys.map(col).join(', ');
  const orderBy = keys.length > 0 ? `ORDER BY ${keyList}` : '';
  // The inner query yields each row's JSON and the running byte total up to
  // it (JSON plus the two bytes of ",\n" between rows, as counted below); the
  // outer one sends the JSON only while that total is within the cap. So a
  // row past the cap, however large, never crosses the wire. OFFSET 0 keeps
  // the planner from computing row_to_json twice.
  let inner = `SELECT j.r, pg_catalog.sum(pg_catalog.octet_length(j.r) + 2) OVER (${orderBy} ROWS UNBOUNDED PRECEDING) AS total`;
  keys.forEach((k, i) => (inner += `, ${col(k)}::text AS k${i}`));
  inner += ` FROM ${quoteIdent(relation.schema)}.${quoteIdent(relation.name)} AS ${t}`;
  inner += ` CROSS JOIN LATERAL (SELECT ${selected.map(col).join(', ')}) AS sel`;
  inner += ` CROSS JOIN LATERAL (SELECT pg_catalog.row_to_json(sel.*)::text AS r OFFSET 0) AS j`;
  if (request.after !== undefined) inner += ` WHERE (${keyList}) > (${request.after.map(param).join(', ')})`;
  inner += ` ${orderBy} LIMIT ${param(request.limit + 1)}`;
  const keyColumns = keys.map((_k, i) => `, s.k${i}`).join('');
  const sql = `SELECT CASE WHEN s.total <= ${param(ROWS_MAX_BYTES)} THEN s.r END AS r${keyColumns} FROM (${inner}) AS s`;

  const out: string[] = [];
  let bytes = 0;
  let last: Record<string, string | null> | undefined;
  let more = false;
  try {
    // A cursor, fetched in batches: the server computes rows only as far as
    // they are fetched, and reading stops at the cap or the limit.
    await query(`DECLARE ${ROWS_CURSOR} NO SCROLL CURSOR FOR ${sql}`, values);
    let want = ROWS_FIRST_FETCH;
    reading: for (;;) {
      const batch = await query<Record<string, string | null>>(`FETCH ${want} FROM ${ROWS_CURSOR}`, []);
      for (const row of batch) {
        if (out.length === request.limit) {
          more = true;
          break reading;
        }
        const json = row.r ?? null;
        // Counted here as well: the server counts bytes in the database
        // encoding, which for a non-UTF-8 database is not what is sent.
        bytes += json === null ? Number.POSITIVE_INFINITY : Buffer.byteLength(json, 'utf8') + 2;
        if (bytes > ROWS_MAX_BYTES) {
          if (out.length === 0) {
            throw new GatewayError(
              'ERR_TOO_LARGE',
              `A single row exceeds the ${ROWS_MAX_BYTES} byte limit of a rows read; restrict columns`,
            );
          }
          more = true;
          break reading;
        }
        out.push(json as string);
        last = row;
      }
      if (batch.length < want) break;
      const average = bytes / Math.max(1, out.length);
      want = Math.min(ROWS_MAX_FETCH, Math.max(1, Math.ceil((ROWS_MAX_BYTES - bytes) / average) + 1));
    }
  } catch (error) {
    // 22xxx data exceptions here can only come from a position whose values
    // do not parse as the key's type: the caller's input, not the backend.
    if (request.after !== undefined && sqlState(error)?.startsWith('22')) {
      throw new GatewayError('ERR_INVALID_INPUT', 'after is not a position this table issued', { cause: error });
    }
    throw error;
  }

  const next =
    more && keys.length > 0 && last !== undefined
      ? `${baseUri}${formatRowsQuery({
          limit: request.limit,
          after: keys.map((_k, i) => last?.[`k${i}`] ?? ''),
          ...(request.columns === undefined ? {} : { columns: request.columns }),
        })}`
      : undefined;
  const head = {
    schema: relation.schema,
    table: relation.name,
    columns: selected,
    orderBy: keys,
    limit: request.limit,
    ...(keys.length === 0 ? { note: 'No fully published primary key: only the first rows, in no defined order.' } : {}),
  };
  const headJson = JSON.stringify(head, null, 2);
  const tail = next === undefined ? '' : `,\n  "next": ${JSON.stringify(next)}`;
  const text = `${headJson.slice(0, -2)},\n  "rows": [${out.length === 0 ? '' : `\n    ${out.join(',\n    ')}\n  `}]${tail}\n}\n`;
  return { text };
}

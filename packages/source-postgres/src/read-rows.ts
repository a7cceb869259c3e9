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
 * MCPGW_RESOURCE_TOO_LARGE. Keeps one read from pulling megabytes of blobs into the
 * gateway and into a model's context.
 */
export const ROWS_MAX_BYTES = 1024 * 1024;
/**
 * Rows in the first batch of a rows read. Later batches are sized from the
 * rows seen so far to end near the cap (at most `ROWS_MAX_BATCH`): the server
 * builds the JSON of every row a batch asks for, even those past the cap that
 * it then does not send.
 */
const ROWS_FIRST_BATCH = 2;
const ROWS_MAX_BATCH = 250;

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
  /** Under the caller's role: only the columns it may SELECT (see `Privileged`). */
  privileged = false,
): Promise<RowsPage> {
  const visible = (await listColumns(query, relation.oid, privileged))
    .map((c) => c.name)
    .filter((name) => !isExcluded(exclude, relation.schema, relation.name, name));
  const visibleSet = new Set(visible);
  if (request.columns?.some((c) => !visibleSet.has(c))) {
    throw new GatewayError(
      'MCPGW_INPUT_INVALID',
      'columns names a column this table does not have (or does not publish)',
    );
  }
  const selected = request.columns ?? visible;
  const primaryKey = await primaryKeyColumns(query, relation.oid);
  // Keyset pagination needs the whole primary key, and the position would
  // reveal hidden key values: without a fully visible key, one page only.
  const keys = primaryKey.length > 0 && primaryKey.every((k) => visibleSet.has(k)) ? primaryKey : [];
  if (request.after !== undefined && request.after.length !== keys.length) {
    throw new GatewayError('MCPGW_INPUT_INVALID', 'after is not a position this table issued');
  }

  const t = 't';
  const col = (name: string) => `${t}.${quoteIdent(name)}`;
  /**
   * One batch: up to `size` rows after the keyset position `after`, each with
   * its JSON only while the batch's running byte total (JSON plus the two
   * bytes of ",\n" between rows, as counted below) is within `budget`, so
   * no row past the cap, however large, crosses the wire. The rows are
   * chosen and ordered first (toasted values stay unread), and JSON is built
   * for those only; the window sums over just this batch. OFFSET 0 keeps the
   * planner from building each row's JSON twice.
   */
  const batchQuery = (after: readonly string[] | undefined, size: number, budget: number) => {
    const values: unknown[] = [];
    const param = (value: unknown) => {
      values.push(value);
      return `$${values.length}`;
    };
    const keyList = keys.map(col).join(', ');
    let rowsSql = `SELECT ${selected.map((c, i) => `${col(c)} AS c${i}`).join(', ')}`;
    keys.forEach((k, i) => (rowsSql += `, ${col(k)} AS o${i}`));
    rowsSql += ` FROM ${quoteIdent(relation.schema)}.${quoteIdent(relation.name)} AS ${t}`;
    if (after !== undefined) rowsSql += ` WHERE (${keyList}) > (${after.map(param).join(', ')})`;
    if (keys.length > 0) rowsSql += ` ORDER BY ${keyList}`;
    rowsSql += ` LIMIT ${param(size)}`;
    const order = keys.length > 0 ? `ORDER BY ${keys.map((_k, i) => `b.o${i}`).join(', ')} ` : '';
    const named = selected.map((c, i) => `b.c${i} AS ${quoteIdent(c)}`).join(', ');
    let sql = `SELECT j.r, pg_catalog.sum(pg_catalog.octet_length(j.r) + 2) OVER (${order}ROWS UNBOUNDED PRECEDING) AS total`;
    keys.forEach((_k, i) => (sql += `, b.o${i}::text AS k${i}`));
    sql += ` FROM (${rowsSql}) AS b`;
    sql += ` CROSS JOIN LATERAL (SELECT pg_catalog.row_to_json(x.*)::text AS r FROM (SELECT ${named}) AS x OFFSET 0) AS j`;
    const keyColumns = keys.map((_k, i) => `, w.k${i}`).join('');
    return {
      text: `SELECT CASE WHEN w.total <= ${param(budget)} THEN w.r END AS r${keyColumns} FROM (${sql}) AS w`,
      values,
    };
  };

  const out: string[] = [];
  let bytes = 0;
  let last: Record<string, string | null> | undefined;
  let more = false;
  let after = request.after;
  let size = keys.length > 0 ? Math.min(ROWS_FIRST_BATCH, request.limit + 1) : request.limit + 1;
  // Keyset batches until the page is full or the cap is reached; without a
  // key there is no position to continue from, so one batch of limit + 1.
  reading: for (;;) {
    const batch = batchQuery(after, size, ROWS_MAX_BYTES - bytes);
    let rows: Array<Record<string, string | null>>;
    try {
      rows = await query<Record<string, string | null>>(batch.text, batch.values);
    } catch (error) {
      // 22xxx data exceptions here can only come from a position whose values
      // do not parse as the key's type: the caller's input, not the backend.
      if (request.after !== undefined && sqlState(error)?.startsWith('22')) {
        throw new GatewayError('MCPGW_INPUT_INVALID', 'after is not a position this table issued', { cause: error });
      }
      throw error;
    }
    for (const row of rows) {
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
            'MCPGW_RESOURCE_TOO_LARGE',
            `A single row exceeds the ${ROWS_MAX_BYTES} byte limit of a rows read; restrict columns`,
          );
        }
        more = true;
        break reading;
      }
      out.push(json as string);
      last = row;
    }
    if (rows.length < size || keys.length === 0 || last === undefined) break;
    after = keys.map((_k, i) => last?.[`k${i}`] ?? '');
    const average = bytes / out.length;
    size = Math.min(
      ROWS_MAX_BATCH,
      request.limit + 1 - out.length,
      Math.max(1, Math.ceil((ROWS_MAX_BYTES - bytes) / average) + 1),
    );
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

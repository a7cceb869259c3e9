/**
 * The keyset scan of one schema's published relations in name order, shared
 * by the listing and the schema overview.
 *
 * Postgres 15 has no index on pg_class ordered by (namespace, name): the one
 * keyset scans use, pg_class_relname_nsp_index, is ordered by (name,
 * namespace) across every schema. A scan for one schema therefore steps over
 * (inside Postgres) every other schema's entries whose names sort between
 * the page's. The largest such block of any database is pg_toast: two
 * entries (`pg_toast_<oid>` and its index) per table with a toastable
 * column, all between `pg_toast_` and `` pg_toast` ``. At 5,000 tables that
 * is 10,000 entries before the first `t...` name, about 1.2 ms of a 0.2 ms
 * query (EXPLAIN ANALYZE, buffers 514 against 20).
 *
 * So the scan is cut in three name ranges merged by name (a Merge Append of
 * three ordered, limited scans): below `pg_toast_` and from `` pg_toast` ``
 * on through the name index, and the block itself through the row types
 * instead (pg_type_typname_nsp_index). Every published kind (tables,
 * partitioned tables, views, materialized views, foreign tables) has a row
 * type of the same name in the same schema: CREATE refuses a name a type
 * already holds, and RENAME and SET SCHEMA carry the row type along, while
 * the row type itself cannot be altered on its own. TOAST tables have no row
 * type, so that branch costs one index probe.
 */

/** Published relation kinds; partitions are reached through their parent. */
export const PUBLISHED = `c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition`;

const TOAST_FROM = `'pg_toast_'::name`;
/** The first name after every `pg_toast_...` name: '`' follows '_' in byte order. */
const TOAST_TO = `'pg_toast\`'::name`;

/**
 * SQL for the relations of schema `$1` (oid) named after `$2` in name (byte)
 * order, at most `$3` rows, selecting `columns` (expressions over `c`, the
 * pg_class row), with `filter` (over `c`) added to every branch.
 */
export function relationKeysetSql(columns: string, filter = 'TRUE'): string {
  const branch = (from: string, where: string) =>
    `(SELECT ${columns}, c.relname AS keyset_name ${from}
       WHERE ${where} AND c.relnamespace = $1::oid AND c.relname > $2::text::name AND ${PUBLISHED} AND (${filter})
       ORDER BY c.relname LIMIT $3)`;
  return `SELECT * FROM (
      ${branch('FROM pg_catalog.pg_class c', `c.relname < ${TOAST_FROM}`)}
      UNION ALL
      ${branch(
        'FROM pg_catalog.pg_type t JOIN pg_catalog.pg_class c ON c.oid = t.typrelid',
        `t.typnamespace = $1::oid AND t.typname >= ${TOAST_FROM} AND t.typname < ${TOAST_TO} AND t.typname > $2::text::name`,
      )}
      UNION ALL
      ${branch('FROM pg_catalog.pg_class c', `c.relname >= ${TOAST_TO}`)}
    ) AS relations
    ORDER BY keyset_name LIMIT $3`;
}

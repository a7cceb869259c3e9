import type { RunQuery } from './read-only-transaction.js';
import { PUBLISHED, relationKeysetSql } from './relation-keyset.js';

/**
 * Catalog reads. Every name a caller supplies is a bound parameter compared
 * against pg_catalog; none of this SQL is ever built from caller input.
 * Relation kinds published: ordinary (r) and partitioned (p) tables, views (v),
 * materialized views (m) and foreign tables (f); partitions are reached
 * through their parent and not listed on their own.
 */

export type RelationKind = 'r' | 'p' | 'v' | 'm' | 'f';

export interface SchemaRow {
  oid: number;
  name: string;
  comment: string | null;
}

export interface RelationSummaryRow {
  name: string;
  kind: RelationKind;
  /** pg_class.reltuples: -1 when never analyzed (Postgres 14+), 0 for views. */
  estimate: number;
  comment: string | null;
}

/**
 * Whether a catalog query keeps only what the current role may use: set for
 * a source that answers under each caller's database role (its
 * `callerIdentity`), where `current_user` is the caller's role when the
 * queries run. Without it the service role's own view is described, grants
 * or not (catalog reads need no privilege).
 */
export type Privileged = boolean;

/** The schema `n` may be used by the current role. */
const SCHEMA_USABLE = `pg_catalog.has_schema_privilege(n.oid, 'USAGE')`;
/** The relation `c` may be read by the current role: SELECT on the table or on one of its columns. */
const RELATION_READABLE = `pg_catalog.has_any_column_privilege(c.oid, 'SELECT')`;

/** The allowed schemas that exist (and, privileged, that the role may use), in catalog (byte) order, from `from` on. */
export async function findSchemas(
  query: RunQuery,
  allowed: readonly string[],
  from = '',
  privileged: Privileged = false,
): Promise<SchemaRow[]> {
  return query<SchemaRow>(
    `SELECT n.oid AS oid, n.nspname::text AS name, pg_catalog.obj_description(n.oid, 'pg_namespace') AS comment
       FROM pg_catalog.pg_namespace n
      WHERE n.nspname = ANY($1::text[]) AND n.nspname >= $2::text::name${privileged ? ` AND ${SCHEMA_USABLE}` : ''}
      ORDER BY n.nspname`,
    [allowed, from],
  );
}

/**
 * Of the relations named (`schemas[i]`.`names[i]`), those the current role
 * may read, with USAGE on their schema: a document under a caller's role
 * names, links and describes only those.
 */
export async function readableRelations(
  query: RunQuery,
  schemas: readonly string[],
  names: readonly string[],
): Promise<Array<{ schema: string; name: string }>> {
  if (names.length === 0) return [];
  return query<{ schema: string; name: string }>(
    `SELECT n.nspname::text AS schema, c.relname::text AS name
       FROM pg_catalog.unnest($1::text[], $2::text[]) AS x(s, r)
       JOIN pg_catalog.pg_namespace n ON n.nspname = x.s::name
       JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relname = x.r::name
      WHERE ${SCHEMA_USABLE} AND ${RELATION_READABLE}`,
    [schemas, names],
  );
}

/**
 * One keyset page of a schema's relations: names strictly after `after`, in
 * `name` (byte) order, at a cost that follows the page size, not the table
 * count (see `relationKeysetSql`).
 */
export async function listRelations(
  query: RunQuery,
  schemaOid: number,
  after: string,
  limit: number,
  namePrefixes?: readonly string[],
  names: readonly string[] = [],
  privileged: Privileged = false,
): Promise<RelationSummaryRow[]> {
  const columns = `c.relname::text AS name, c.relkind::text AS kind, c.reltuples::float8 AS estimate,
              pg_catalog.obj_description(c.oid, 'pg_class') AS comment`;
  const readable = privileged ? RELATION_READABLE : 'TRUE';
  if (namePrefixes === undefined) {
    return query<RelationSummaryRow>(relationKeysetSql(columns, readable), [schemaOid, after, limit]);
  }
  // A listing narrowed to the caller's grants: only names that
  // start with one of the prefixes, compared as bytes like the ORDER BY, or
  // that equal one of the names.
  return query<RelationSummaryRow>(
    relationKeysetSql(
      columns,
      `(EXISTS (SELECT 1 FROM pg_catalog.unnest($4::text[]) AS p(prefix)
                WHERE pg_catalog.starts_with(c.relname::text, p.prefix))
       OR c.relname::text = ANY ($5::text[])) AND ${readable}`,
    ),
    [schemaOid, after, limit, namePrefixes, names],
  );
}

/**
 * Names of a schema's published relations after `after`, in name order: the
 * overview counts the ones a caller may see beyond those it shows.
 */
export async function listRelationNames(
  query: RunQuery,
  schemaOid: number,
  after: string,
  limit: number,
  privileged: Privileged = false,
): Promise<string[]> {
  const rows = await query<{ name: string }>(
    relationKeysetSql('c.relname::text AS name', privileged ? RELATION_READABLE : 'TRUE'),
    [schemaOid, after, limit],
  );
  return rows.map((r) => r.name);
}

export interface RelationRow extends RelationSummaryRow {
  oid: number;
  schema: string;
}

/** The published relation `schema.name` (privileged: only if the role may read it), or undefined. */
export async function findRelation(
  query: RunQuery,
  schema: string,
  name: string,
  privileged: Privileged = false,
): Promise<RelationRow | undefined> {
  const rows = await query<RelationRow>(
    `SELECT c.oid AS oid, n.nspname::text AS schema, c.relname::text AS name, c.relkind::text AS kind,
            c.reltuples::float8 AS estimate, pg_catalog.obj_description(c.oid, 'pg_class') AS comment
       FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1::text::name AND c.relname = $2::text::name AND ${PUBLISHED}${
        privileged ? ` AND ${SCHEMA_USABLE} AND ${RELATION_READABLE}` : ''
      }`,
    [schema, name],
  );
  return rows[0];
}

export interface ColumnRow {
  name: string;
  type: string;
  notNull: boolean;
  default: string | null;
  /** 'a' always / 'd' by default for identity columns, '' otherwise. */
  identity: string;
  /** 's' for stored generated columns, '' otherwise. */
  generated: string;
  comment: string | null;
  /** The schema of the column's type (of its element type, for an array). */
  typeSchema: string;
}

/** The relation's columns in order (privileged: only those the role may SELECT). */
export async function listColumns(
  query: RunQuery,
  relationOid: number,
  privileged: Privileged = false,
): Promise<ColumnRow[]> {
  return query<ColumnRow>(
    `SELECT a.attname::text AS name, pg_catalog.format_type(a.atttypid, a.atttypmod) AS type,
            a.attnotnull AS "notNull", pg_catalog.pg_get_expr(d.adbin, d.adrelid) AS default,
            a.attidentity::text AS identity, a.attgenerated::text AS generated,
            pg_catalog.col_description(a.attrelid, a.attnum) AS comment,
            tn.nspname::text AS "typeSchema"
       FROM pg_catalog.pg_attribute a
       LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
       JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
       LEFT JOIN pg_catalog.pg_type et ON et.oid = t.typelem AND t.typlen = -1
       JOIN pg_catalog.pg_namespace tn ON tn.oid = coalesce(et.typnamespace, t.typnamespace)
      WHERE a.attrelid = $1::oid AND a.attnum > 0 AND NOT a.attisdropped${
        privileged ? ` AND pg_catalog.has_column_privilege(a.attrelid, a.attnum, 'SELECT')` : ''
      }
      ORDER BY a.attnum`,
    [relationOid],
  );
}

/** The primary key's columns in key order; empty when there is none. */
export async function primaryKeyColumns(query: RunQuery, relationOid: number): Promise<string[]> {
  const rows = await query<{ name: string }>(
    `SELECT a.attname::text AS name
       FROM pg_catalog.pg_index x
       CROSS JOIN LATERAL unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
       JOIN pg_catalog.pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
      WHERE x.indrelid = $1::oid AND x.indisprimary
      ORDER BY k.ord`,
    [relationOid],
  );
  return rows.map((r) => r.name);
}

export interface ConstraintRow {
  name: string;
  /** p primary key, f foreign key, u unique, c check, x exclusion. */
  type: string;
  definition: string;
  /** For foreign keys: the other table (referenced, or referencing for `referencedBy`). */
  otherSchema: string | null;
  otherTable: string | null;
  /** Whether the other table is published (not a partition, a kind this source publishes). */
  otherPublished: boolean | null;
  /** The constraint's columns on the table it is declared on, in key order. */
  columns: string[];
}

/** The constraint's own columns (conkey), in key order. */
const CONSTRAINT_COLUMNS = `ARRAY(SELECT a.attname::text FROM unnest(o.conkey) WITH ORDINALITY AS k(attnum, ord)
              JOIN pg_catalog.pg_attribute a ON a.attrelid = o.conrelid AND a.attnum = k.attnum
             ORDER BY k.ord) AS columns`;
const OTHER_PUBLISHED = `(c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition)`;

/** Constraints declared on the relation, by name. */
export async function listConstraints(query: RunQuery, relationOid: number): Promise<ConstraintRow[]> {
  return query<ConstraintRow>(
    `SELECT o.conname::text AS name, o.contype::text AS type, pg_catalog.pg_get_constraintdef(o.oid, true) AS definition,
            rn.nspname::text AS "otherSchema", r.relname::text AS "otherTable",
            ${OTHER_PUBLISHED.replaceAll('c.', 'r.')} AS "otherPublished", ${CONSTRAINT_COLUMNS}
       FROM pg_catalog.pg_constraint o
       LEFT JOIN pg_catalog.pg_class r ON r.oid = o.confrelid
       LEFT JOIN pg_catalog.pg_namespace rn ON rn.oid = r.relnamespace
      WHERE o.conrelid = $1::oid
      ORDER BY o.contype, o.conname`,
    [relationOid],
  );
}

/**
 * Foreign keys of published tables in the allowed schemas that point at this
 * one, each declared once (not again on every partition), in (schema, table,
 * name) order, bounded: a hub table can have many.
 */
export async function listReferencedBy(
  query: RunQuery,
  relationOid: number,
  allowed: readonly string[],
  limit: number,
): Promise<ConstraintRow[]> {
  return query<ConstraintRow>(
    `SELECT o.conname::text AS name, o.contype::text AS type, pg_catalog.pg_get_constraintdef(o.oid, true) AS definition,
            n.nspname::text AS "otherSchema", c.relname::text AS "otherTable", true AS "otherPublished",
            ${CONSTRAINT_COLUMNS}
       FROM pg_catalog.pg_constraint o
       JOIN pg_catalog.pg_class c ON c.oid = o.conrelid
       JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE o.confrelid = $1::oid AND o.contype = 'f' AND o.conparentid = 0
        AND n.nspname = ANY($2::text[]) AND ${OTHER_PUBLISHED}
      ORDER BY n.nspname, c.relname, o.conname
      LIMIT $3`,
    [relationOid, allowed, limit],
  );
}

/** A part of a table's description, and one object its expression depends on. */
export interface PartDependencyRow {
  /** Which part: a column default (`key` = column name), a constraint or index (`key` = its name), or the view's query. */
  part: 'default' | 'constraint' | 'index' | 'view';
  key: string;
  /** The object's schema; null for objects outside any schema. */
  schema: string | null;
  /** For a relation: its name, kind (pg_class.relkind) and whether this source publishes that kind. */
  relation: string | null;
  relkind: string | null;
  published: boolean | null;
}

/**
 * The objects that the expressions of a relation's description depend on
 * (pg_depend, normal dependencies): column defaults and generated columns,
 * constraints, indexes and a view's query. Those texts name what they depend
 * on, so a part depending on something the caller may not see is not shown.
 * The relation itself (its own columns) is left out.
 */
export async function listPartDependencies(query: RunQuery, relationOid: number): Promise<PartDependencyRow[]> {
  return query<PartDependencyRow>(
    `WITH parts AS (
       SELECT 'default'::text AS part, a.attname::text AS key, 'pg_catalog.pg_attrdef'::regclass AS classid, d.oid AS objid
         FROM pg_catalog.pg_attrdef d
         JOIN pg_catalog.pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
        WHERE d.adrelid = $1::oid
       UNION ALL
       SELECT 'constraint', o.conname::text, 'pg_catalog.pg_constraint'::regclass, o.oid
         FROM pg_catalog.pg_constraint o WHERE o.conrelid = $1::oid
       UNION ALL
       SELECT 'index', i.relname::text, 'pg_catalog.pg_class'::regclass, x.indexrelid
         FROM pg_catalog.pg_index x JOIN pg_catalog.pg_class i ON i.oid = x.indexrelid
        WHERE x.indrelid = $1::oid
       UNION ALL
       SELECT 'view', '', 'pg_catalog.pg_rewrite'::regclass, w.oid
         FROM pg_catalog.pg_rewrite w WHERE w.ev_class = $1::oid
     )
     SELECT DISTINCT p.part, p.key, coalesce(cn.nspname::text, io.schema) AS schema,
            c.relname::text AS relation, c.relkind::text AS relkind, ${OTHER_PUBLISHED.replace('(', '(c.oid IS NOT NULL AND ')} AS published
       FROM parts p
       JOIN pg_catalog.pg_depend dep ON dep.classid = p.classid AND dep.objid = p.objid AND dep.deptype = 'n'
       LEFT JOIN pg_catalog.pg_class c ON dep.refclassid = 'pg_catalog.pg_class'::regclass AND c.oid = dep.refobjid
       LEFT JOIN pg_catalog.pg_namespace cn ON cn.oid = c.relnamespace
       LEFT JOIN LATERAL pg_catalog.pg_identify_object(dep.refclassid, dep.refobjid, 0) io ON c.oid IS NULL
      WHERE NOT (dep.refclassid = 'pg_catalog.pg_class'::regclass AND dep.refobjid = $1::oid)`,
    [relationOid],
  );
}

export interface IndexRow {
  name: string;
  definition: string;
  primary: boolean;
  unique: boolean;
}

export async function listIndexes(query: RunQuery, relationOid: number): Promise<IndexRow[]> {
  return query<IndexRow>(
    `SELECT i.relname::text AS name, pg_catalog.pg_get_indexdef(x.indexrelid) AS definition,
            x.indisprimary AS primary, x.indisunique AS unique
       FROM pg_catalog.pg_index x JOIN pg_catalog.pg_class i ON i.oid = x.indexrelid
      WHERE x.indrelid = $1::oid
      ORDER BY i.relname`,
    [relationOid],
  );
}

/** The SELECT behind a view or materialized view. */
export async function viewDefinition(query: RunQuery, relationOid: number): Promise<string | undefined> {
  const rows = await query<{ definition: string | null }>(
    `SELECT pg_catalog.pg_get_viewdef($1::oid, true) AS definition`,
    [relationOid],
  );
  return rows[0]?.definition ?? undefined;
}

import type { FingerprintUris } from '@mcpgw/core';
import type { RunQuery } from './read-only-transaction.js';

/**
 * A fingerprint per published object of the allowed schemas: key
 * `JSON.stringify([schema, table])` (table `''` for the schema itself), value
 * an md5 over everything its resource shows except the row estimate (which
 * moves with every ANALYZE and would make the feed noise: estimates refresh
 * with `ttlMs` instead). A table's value covers its kind, comment, columns,
 * defaults, constraints, indexes and view definition. Each foreign key that
 * references it has a key of its own, `[schema, table, fromSchema,
 * fromTable, name]`: the table's "Referenced by" shows it only to a caller
 * who may see the referencing relation, so its change is the referenced
 * table's change only for them (`FingerprintUris.part`).
 */
export type CatalogFingerprint = Map<string, string>;

export async function catalogFingerprint(query: RunQuery, schemas: readonly string[]): Promise<CatalogFingerprint> {
  const rows = await query<{ schema: string; name: string; fk: string | null; fp: string }>(
    `SELECT n.nspname::text AS schema, ''::text AS name, NULL::text AS fk,
            md5(coalesce(pg_catalog.obj_description(n.oid, 'pg_namespace'), '')) AS fp
       FROM pg_catalog.pg_namespace n
      WHERE n.nspname = ANY($1::text[])
     UNION ALL
     SELECT n.nspname::text, c.relname::text, NULL::text, md5(concat_ws(E'\\x1f',
              c.relkind::text,
              pg_catalog.obj_description(c.oid, 'pg_class'),
              (SELECT string_agg(concat_ws(',', a.attnum, a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod),
                                           a.attnotnull, a.attidentity, a.attgenerated,
                                           pg_catalog.pg_get_expr(d.adbin, d.adrelid),
                                           pg_catalog.col_description(c.oid, a.attnum)), E'\\x1e' ORDER BY a.attnum)
                 FROM pg_catalog.pg_attribute a
                 LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
              (SELECT string_agg(o.conname || ':' || pg_catalog.pg_get_constraintdef(o.oid, true), E'\\x1e' ORDER BY o.conname)
                 FROM pg_catalog.pg_constraint o WHERE o.conrelid = c.oid),
              (SELECT string_agg(pg_catalog.pg_get_indexdef(x.indexrelid), E'\\x1e' ORDER BY x.indexrelid)
                 FROM pg_catalog.pg_index x WHERE x.indrelid = c.oid),
              CASE WHEN c.relkind IN ('v', 'm') THEN pg_catalog.pg_get_viewdef(c.oid, true) END
            ))
       FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = ANY($1::text[]) AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition
     UNION ALL
     -- Each foreign key a published relation of the allowed schemas holds on another: the "Referenced by"
     -- its target's description shows (only to a caller who may see the relation that holds it).
     SELECT tn.nspname::text, t.relname::text, pg_catalog.json_build_array(n.nspname, c.relname, o.conname)::text,
            md5(pg_catalog.pg_get_constraintdef(o.oid, true))
       FROM pg_catalog.pg_constraint o
       JOIN pg_catalog.pg_class c ON c.oid = o.conrelid
       JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_catalog.pg_class t ON t.oid = o.confrelid
       JOIN pg_catalog.pg_namespace tn ON tn.oid = t.relnamespace
      WHERE o.contype = 'f' AND o.conparentid = 0
        AND n.nspname = ANY($1::text[]) AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition
        AND tn.nspname = ANY($1::text[]) AND t.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT t.relispartition`,
    [schemas],
  );
  return new Map(
    rows.map((r) => {
      const key = r.fk === null ? [r.schema, r.name] : [r.schema, r.name, ...(JSON.parse(r.fk) as string[])];
      return [JSON.stringify(key), r.fp];
    }),
  );
}

/**
 * The resources a fingerprint key stands for: a
 * schema's key is its overview; a relation's key is its description, shown
 * in its schema's overview too, so a change to a relation updates both.
 */
export function catalogFingerprintUris(uris: {
  schema: (schema: string) => string;
  table: (schema: string, table: string) => string;
}): FingerprintUris {
  const parse = (key: string) => JSON.parse(key) as [string, string, ...string[]];
  return {
    uri(key) {
      const [schema, table] = parse(key);
      return table === '' ? uris.schema(schema) : uris.table(schema, table);
    },
    containers(key) {
      const [schema, table] = parse(key);
      return table === '' ? [] : [uris.schema(schema)];
    },
    part(key) {
      const [schema, table, fromSchema, fromTable] = parse(key);
      if (fromSchema === undefined || fromTable === undefined) return undefined;
      return { uri: uris.table(schema, table), because: uris.table(fromSchema, fromTable) };
    },
  };
}

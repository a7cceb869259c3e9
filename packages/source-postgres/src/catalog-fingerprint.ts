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
 *
 * With `roles` (a source with `callerIdentity`: its allowlist), what decides
 * what those roles see is in it too, so a `GRANT`, `REVOKE` or policy change
 * alone is a change (ADR 0013: the caches and listen streams follow the
 * database's own rules). Values then also cover the schema's and table's
 * ACLs (`nspacl`, `relacl`), each column's (`attacl`), the row-level
 * security flags and the table's policies (what its rows read under each
 * role). And each role has a key `[schema, table, role]` (table `''` for a
 * schema) for each object it may use or read exactly when the listing under
 * that role shows it: `USAGE` on the schema, and `SELECT` on the table or one
 * of its columns. Such a key comes or goes as the object does in that role's
 * listing, which is a list change (a role that gains a table is told of it),
 * and it follows role membership too, which no event trigger hears but
 * polling does. A role the database does not know has no keys.
 */
export type CatalogFingerprint = Map<string, string>;

/** The ACL, RLS and policy parts of a privileged fingerprint; fixed SQL, never built from input. */
const PRIVILEGED = {
  schema: `, n.nspacl::text`,
  column: `, a.attacl::text`,
  relation: `,
              c.relacl::text, c.relrowsecurity::text, c.relforcerowsecurity::text,
              (SELECT string_agg(concat_ws(',', p.polname, p.polcmd, p.polpermissive, p.polroles::text,
                                           pg_catalog.pg_get_expr(p.polqual, p.polrelid),
                                           pg_catalog.pg_get_expr(p.polwithcheck, p.polrelid)), E'\\x1e' ORDER BY p.polname)
                 FROM pg_catalog.pg_policy p WHERE p.polrelid = c.oid)`,
  // The listing's own tests (catalog-queries.ts), asked for each allowlisted role instead of the current one.
  visibility: `
     UNION ALL
     SELECT n.nspname::text, ''::text, pg_catalog.json_build_array(r.rolname)::text, ''::text
       FROM pg_catalog.pg_namespace n CROSS JOIN pg_catalog.pg_roles r
      WHERE n.nspname = ANY($1::text[]) AND r.rolname::text = ANY($2::text[])
        AND pg_catalog.has_schema_privilege(r.oid, n.oid, 'USAGE')
     UNION ALL
     SELECT n.nspname::text, c.relname::text, pg_catalog.json_build_array(r.rolname)::text, ''::text
       FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      CROSS JOIN pg_catalog.pg_roles r
      WHERE n.nspname = ANY($1::text[]) AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition
        AND r.rolname::text = ANY($2::text[])
        AND pg_catalog.has_schema_privilege(r.oid, n.oid, 'USAGE')
        AND pg_catalog.has_any_column_privilege(r.oid, c.oid, 'SELECT')`,
} as const;

const NONE = { schema: '', column: '', relation: '', visibility: '' } as const;

export async function catalogFingerprint(
  query: RunQuery,
  schemas: readonly string[],
  /** The roles callers may act as (`callerIdentity.roles`); absent, everyone reads as the login role. */
  roles?: readonly string[],
): Promise<CatalogFingerprint> {
  const part = roles === undefined ? NONE : PRIVILEGED;
  const rows = await query<{ schema: string; name: string; extra: string | null; fp: string }>(
    `SELECT n.nspname::text AS schema, ''::text AS name, NULL::text AS extra,
            md5(concat_ws(E'\\x1f', coalesce(pg_catalog.obj_description(n.oid, 'pg_namespace'), '')${part.schema})) AS fp
       FROM pg_catalog.pg_namespace n
      WHERE n.nspname = ANY($1::text[])
     UNION ALL
     SELECT n.nspname::text, c.relname::text, NULL::text, md5(concat_ws(E'\\x1f',
              c.relkind::text,
              pg_catalog.obj_description(c.oid, 'pg_class'),
              (SELECT string_agg(concat_ws(',', a.attnum, a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod),
                                           a.attnotnull, a.attidentity, a.attgenerated,
                                           pg_catalog.pg_get_expr(d.adbin, d.adrelid),
                                           pg_catalog.col_description(c.oid, a.attnum)${part.column}), E'\\x1e' ORDER BY a.attnum)
                 FROM pg_catalog.pg_attribute a
                 LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
              (SELECT string_agg(o.conname || ':' || pg_catalog.pg_get_constraintdef(o.oid, true), E'\\x1e' ORDER BY o.conname)
                 FROM pg_catalog.pg_constraint o WHERE o.conrelid = c.oid),
              (SELECT string_agg(pg_catalog.pg_get_indexdef(x.indexrelid), E'\\x1e' ORDER BY x.indexrelid)
                 FROM pg_catalog.pg_index x WHERE x.indrelid = c.oid),
              CASE WHEN c.relkind IN ('v', 'm') THEN pg_catalog.pg_get_viewdef(c.oid, true) END${part.relation}
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
        AND tn.nspname = ANY($1::text[]) AND t.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT t.relispartition${part.visibility}`,
    roles === undefined ? [schemas] : [schemas, roles],
  );
  return new Map(
    rows.map((r) => {
      const key = r.extra === null ? [r.schema, r.name] : [r.schema, r.name, ...(JSON.parse(r.extra) as string[])];
      return [JSON.stringify(key), r.fp];
    }),
  );
}

/**
 * The resources a fingerprint key stands for: a
 * schema's key is its overview; a relation's key is its description, shown
 * in its schema's overview too, so a change to a relation updates both. A
 * role's key (`[schema, table, role]`) stands for the same resource as the
 * object's own, and a foreign key's (five parts) is part of the table it references.
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
      const [schema, table, fromSchema, fromTable, name] = parse(key);
      if (fromSchema === undefined || fromTable === undefined || name === undefined) return undefined;
      return { uri: uris.table(schema, table), because: uris.table(fromSchema, fromTable) };
    },
  };
}

import { decodePercentPrefix, normalizePrefixes } from '@mcpgw/core';
import { uriPrefix } from './resource-uri.js';

/**
 * What a listing narrowed to the caller's URI prefixes (issue 15) asks the
 * catalog for, per allowed schema: `tables` undefined lists every relation,
 * otherwise only those whose name starts with one of the prefixes; `schemaEntry`
 * says whether the schema's own resource can be visible at all.
 */
export interface SchemaNarrowing {
  schema: string;
  schemaEntry: boolean;
  tables: string[] | undefined;
}

/**
 * Maps URI prefixes to schema and table filters over the configured
 * allowlist (in its given order), or `undefined` for a full scan (a prefix
 * covers the whole source). Every URI of the source that starts with one of
 * the prefixes is a schema or relation these filters keep: a prefix inside a
 * schema segment keeps the schemas starting with it (and all their tables);
 * a prefix past the schema's `/` keeps that one schema and the tables whose
 * name starts with the rest. Prefixes outside the source keep nothing.
 */
export function narrowSchemas(
  sourceId: string,
  allowed: readonly string[],
  prefixes: readonly string[],
): SchemaNarrowing[] | undefined {
  const base = uriPrefix(sourceId);
  const bySchema = new Map<string, { schemaEntry: boolean; tables: string[] | undefined }>();
  const keep = (schema: string, table: string | undefined) => {
    const current = bySchema.get(schema) ?? { schemaEntry: false, tables: [] };
    if (table === undefined) {
      current.schemaEntry = true;
      current.tables = undefined;
    } else if (current.tables !== undefined) {
      current.tables.push(table);
    }
    bySchema.set(schema, current);
  };
  for (const prefix of prefixes) {
    if (base.startsWith(prefix)) return undefined;
    if (!prefix.startsWith(base)) continue;
    const rest = prefix.slice(base.length);
    const slash = rest.indexOf('/');
    if (slash === -1) {
      const start = decodePercentPrefix(rest);
      for (const schema of allowed) if (schema.startsWith(start)) keep(schema, undefined);
      continue;
    }
    const schema = decodeExactly(rest.slice(0, slash));
    if (schema === undefined || !allowed.includes(schema)) continue;
    // `.../{schema}/{table}/rows...` narrows to the table itself.
    const tail = rest.slice(slash + 1);
    const tableEnd = tail.indexOf('/');
    keep(schema, decodePercentPrefix(tableEnd === -1 ? tail : tail.slice(0, tableEnd)));
  }
  return allowed.flatMap((schema) => {
    const found = bySchema.get(schema);
    if (found === undefined) return [];
    const tables = found.tables === undefined ? undefined : normalizePrefixes(found.tables);
    return [{ schema, schemaEntry: found.schemaEntry, tables: tables?.[0] === '' ? undefined : tables }];
  });
}

function decodeExactly(encoded: string): string | undefined {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return undefined;
  }
}

import { decodePercentPrefix, normalizePrefixes, type ListingRange } from '@mcpgw/core';
import { uriPrefix } from './resource-uri.js';

/**
 * What a listing narrowed to the caller's URI prefixes asks the
 * catalog for, per allowed schema: `tables` undefined lists every relation,
 * otherwise only those whose name starts with one of the prefixes; `schemaEntry`
 * says whether the schema's own resource can be visible at all.
 */
export interface SchemaNarrowing {
  schema: string;
  schemaEntry: boolean;
  tables: string[] | undefined;
  /** With `tables`: relations named exactly so (grants naming one table), besides the prefixes. */
  names?: string[];
}

/**
 * Maps URI prefixes to schema and table filters over the configured
 * allowlist (in its given order), or `undefined` for a full scan (a prefix
 * covers the whole source). Every URI of the source that starts with one of
 * the prefixes is a schema or relation these filters keep: a prefix inside a
 * schema segment keeps the schemas starting with it (and all their tables);
 * a prefix past the schema's `/` keeps that one schema and the tables whose
 * name starts with the rest. A range's shape (`ListingRange`) narrows
 * further: one level inside the schema segment keeps the schema entries
 * only, and a range naming one schema or table keeps just it. Prefixes
 * outside the source keep nothing.
 */
export function narrowSchemas(
  sourceId: string,
  allowed: readonly string[],
  ranges: readonly (string | ListingRange)[],
): SchemaNarrowing[] | undefined {
  const base = uriPrefix(sourceId);
  const bySchema = new Map<string, { schemaEntry: boolean; tables: string[] | undefined; names: string[] }>();
  /** `'all'`: the schema and every relation; `'entry'`: the schema's own resource; else a table filter. */
  const keep = (schema: string, what: 'all' | 'entry' | { prefix: string } | { name: string }) => {
    const current = bySchema.get(schema) ?? { schemaEntry: false, tables: [], names: [] };
    if (what === 'all' || what === 'entry') current.schemaEntry = true;
    if (what === 'all') current.tables = undefined;
    else if (typeof what === 'object' && 'prefix' in what) current.tables?.push(what.prefix);
    else if (typeof what === 'object') current.names.push(what.name);
    bySchema.set(schema, current);
  };
  for (const item of ranges) {
    const range: ListingRange = typeof item === 'string' ? { prefix: item } : item;
    const prefix = range.prefix;
    if (base.startsWith(prefix)) return undefined;
    if (!prefix.startsWith(base)) continue;
    const rest = prefix.slice(base.length);
    const slash = rest.indexOf('/');
    if (slash === -1) {
      // Inside the schema segment: one schema (exact), schema entries only (one level), or whole schemas.
      const exactName = range.exact === true ? decodeExactly(rest) : undefined;
      if (exactName !== undefined) {
        if (allowed.includes(exactName)) keep(exactName, 'entry');
        continue;
      }
      const start = decodePercentPrefix(rest);
      const what = range.depth === 0 || range.exact === true ? 'entry' : 'all';
      for (const schema of allowed) if (schema.startsWith(start)) keep(schema, what);
      continue;
    }
    const schema = decodeExactly(rest.slice(0, slash));
    if (schema === undefined || !allowed.includes(schema)) continue;
    // `.../{schema}/{table}/rows...` narrows to the table itself, named in full.
    const tail = rest.slice(slash + 1);
    const tableEnd = tail.indexOf('/');
    const whole =
      tableEnd === -1
        ? range.exact === true
          ? decodeExactly(tail)
          : undefined
        : decodeExactly(tail.slice(0, tableEnd));
    if (whole !== undefined) keep(schema, { name: whole });
    else keep(schema, { prefix: decodePercentPrefix(tableEnd === -1 ? tail : tail.slice(0, tableEnd)) });
  }
  return allowed.flatMap((schema) => {
    const found = bySchema.get(schema);
    if (found === undefined) return [];
    const tables = found.tables === undefined ? undefined : normalizePrefixes(found.tables);
    if (tables?.[0] === '') return [{ schema, schemaEntry: found.schemaEntry, tables: undefined }];
    // Names a prefix already keeps add nothing.
    const names = [...new Set(found.names)].filter((name) => !tables?.some((p) => name.startsWith(p))).sort();
    return [
      {
        schema,
        schemaEntry: found.schemaEntry,
        tables: tables === undefined ? undefined : tables,
        ...(tables !== undefined && names.length > 0 ? { names } : {}),
      },
    ];
  });
}

function decodeExactly(encoded: string): string | undefined {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return undefined;
  }
}

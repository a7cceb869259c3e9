import { invalidPosition, type Page, type PageRequest, type ResourceDescriptor } from '@mcpgw/core';
import { findSchemas, listRelations, type RelationSummaryRow, type SchemaRow } from './catalog-queries.js';
import { narrowSchemas } from './listing-narrowing.js';
import { displayIdent } from './quote-ident.js';
import type { RunQuery } from './read-only-transaction.js';
import { relationSummary, relationTitle } from './render-markdown.js';
import type { SourceScope } from './source-scope.js';

const MARKDOWN = 'text/markdown';

/**
 * One page of a Postgres source's listing: schemas in name order, each
 * followed by its relations in name order. With `page.prefixes` only the
 * allowed schemas and the relation names the caller's grants can reach are
 * asked of the catalog, so no query names or scans another schema; the
 * order and positions are those of the full listing, of which this is the
 * part the prefixes keep. `run` runs the catalog queries in one read-only
 * transaction.
 */
export async function listPostgresResources(
  scope: SourceScope,
  page: PageRequest,
  run: <T>(work: (query: RunQuery) => Promise<T>) => Promise<T>,
): Promise<Page<ResourceDescriptor>> {
  const [fromSchema, fromName] = page.position === undefined ? ['', undefined] : parsePosition(scope, page.position);
  const limit = Math.max(1, Math.floor(page.limit));
  const narrowing =
    page.prefixes === undefined
      ? undefined
      : narrowSchemas(scope.sourceId, scope.allowed, page.ranges ?? page.prefixes);
  if (narrowing?.length === 0) return { items: [] };
  const byName = new Map(narrowing?.map((n) => [n.schema, n]));
  const schemas = narrowing === undefined ? scope.allowed : narrowing.map((n) => n.schema);
  return run(async (query) => {
    const items: ResourceDescriptor[] = [];
    let last: [string, string] | undefined;
    for (const schema of await findSchemas(query, schemas, fromSchema, scope.privileged)) {
      const narrowed = byName.get(schema.name);
      let after = schema.name === fromSchema ? fromName : undefined;
      if (after === undefined) {
        if (narrowed?.schemaEntry !== false) {
          if (items.length === limit) return { items, nextPosition: JSON.stringify(last) };
          items.push(schemaDescriptor(scope, schema));
          last = [schema.name, ''];
        }
        after = '';
      }
      // Grants that reach this schema's own resource only: no relation query.
      if (narrowed?.tables?.length === 0 && narrowed.names === undefined) continue;
      const room = limit - items.length;
      if (room === 0) return { items, nextPosition: JSON.stringify([schema.name, after]) };
      const relations = await listRelations(
        query,
        schema.oid,
        after,
        room + 1,
        narrowed?.tables,
        narrowed?.names,
        scope.privileged,
      );
      for (const r of relations.slice(0, room)) {
        items.push(relationDescriptor(scope, schema.name, r));
        last = [schema.name, r.name];
      }
      if (relations.length > room) return { items, nextPosition: JSON.stringify(last) };
    }
    return { items };
  });
}

/** Position: JSON `[schema, lastRelationName]`; `''` = just after the schema's own entry. */
function parsePosition(scope: SourceScope, position: string): [string, string] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(position);
  } catch (error) {
    throw invalidPosition(error);
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    typeof parsed[0] !== 'string' ||
    typeof parsed[1] !== 'string' ||
    !scope.allowedSet.has(parsed[0]) ||
    parsed[1].includes('\0') ||
    Buffer.byteLength(parsed[1]) > 63
  ) {
    throw invalidPosition();
  }
  return [parsed[0], parsed[1]];
}

function schemaDescriptor(scope: SourceScope, s: SchemaRow): ResourceDescriptor {
  return {
    uri: scope.schemaUri(s.name),
    name: s.name,
    title: `Schema ${displayIdent(s.name)}`,
    description:
      s.comment ??
      `Overview of schema ${displayIdent(s.name)}: its tables and views with comments and estimated row counts.`,
    mimeType: MARKDOWN,
  };
}

function relationDescriptor(scope: SourceScope, schema: string, r: RelationSummaryRow): ResourceDescriptor {
  return {
    uri: scope.tableUri(schema, r.name),
    name: `${schema}.${r.name}`,
    title: relationTitle(schema, r),
    description: r.comment ?? relationSummary(schema, r),
    mimeType: MARKDOWN,
  };
}

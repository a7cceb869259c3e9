import type { VisibleUri } from '@mcpgw/core';
import {
  findRelation,
  findSchemas,
  listColumns,
  listConstraints,
  listIndexes,
  listPartDependencies,
  listReferencedBy,
  listRelationNames,
  listRelations,
  viewDefinition,
  type PartDependencyRow,
  type RelationSummaryRow,
  type SchemaRow,
} from './catalog-queries.js';
import type { RunQuery } from './read-only-transaction.js';
import { renderSchemaOverview, renderTableDescription } from './render-markdown.js';
import { uriPrefix } from './resource-uri.js';
import type { SourceScope } from './source-scope.js';

/** Relations shown in a schema overview; the rest are reached by listing or the template. */
export const OVERVIEW_MAX_RELATIONS = 500;
/** Incoming foreign keys shown on a table. */
const REFERENCED_BY_MAX = 50;
/** Incoming foreign keys looked at for those, before the caller's view filters them. */
const REFERENCED_BY_SCAN = 1000;
/** Relations per catalog query while an overview looks for the ones a caller may see. */
const OVERVIEW_BATCH = 500;
/** What a document says in place of a type or expression that names something the caller may not see. */
const NOT_VISIBLE_TYPE = '(a type outside what you may see)';

/** The overview document of an allowed schema as the caller may see it; undefined when the schema does not exist. */
export async function schemaDocument(
  scope: SourceScope,
  query: RunQuery,
  schema: string,
  visible: VisibleUri,
): Promise<string | undefined> {
  const [found] = (await findSchemas(query, [schema])).filter((s) => s.name === schema);
  return found === undefined ? undefined : overview(scope, query, found, visible);
}

/**
 * The description of relation `schema.table` as the caller may see it (see
 * `dependencyHidden`); undefined when it does not exist. `rowsUri` links its
 * rows resource when rows are enabled.
 */
export async function tableDocument(
  scope: SourceScope,
  query: RunQuery,
  { schema, table }: { schema: string; table: string },
  visible: VisibleUri,
  rowsUri: string | undefined,
): Promise<string | undefined> {
  const relation = await findRelation(query, schema, table);
  if (relation === undefined) return undefined;
  const hidden = new Set(
    (await listPartDependencies(query, relation.oid))
      .filter((dep) => dependencyHidden(scope, visible, dep))
      .map((dep) => `${dep.part}:${dep.key}`),
  );
  const incoming = await listReferencedBy(query, relation.oid, scope.allowed, REFERENCED_BY_SCAN);
  const referencedBy = incoming.filter(
    (c) =>
      c.otherSchema !== null && c.otherTable !== null && relationVisible(scope, visible, c.otherSchema, c.otherTable),
  );
  const columns = (await listColumns(query, relation.oid)).map((c) =>
    c.typeSchema === 'pg_catalog' || scope.allowedSet.has(c.typeSchema) ? c : { ...c, type: NOT_VISIBLE_TYPE },
  );
  return renderTableDescription({
    ...relation,
    columns,
    constraints: await listConstraints(query, relation.oid),
    referencedBy: referencedBy.slice(0, REFERENCED_BY_MAX),
    referencedByMore: referencedBy.length > REFERENCED_BY_MAX || incoming.length === REFERENCED_BY_SCAN,
    indexes: await listIndexes(query, relation.oid),
    viewDefinition:
      relation.kind === 'v' || relation.kind === 'm' ? await viewDefinition(query, relation.oid) : undefined,
    hidden,
    schemaUri: scope.schemaUri(schema),
    relationUri: (s, t) => (relationVisible(scope, visible, s, t) ? scope.tableUri(s, t) : undefined),
    rowsUri,
  });
}

/** Whether the caller may see relation `schema.name` (a published kind) of this source. */
function relationVisible(scope: SourceScope, visible: VisibleUri, schema: string, name: string): boolean {
  return scope.allowedSet.has(schema) && visible(scope.tableUri(schema, name));
}

/**
 * Whether a part of a description whose expression depends on `dep` would
 * name something the caller may not see: a relation outside the caller's
 * view (or a partition, which is no resource), or any object in a schema
 * outside the allowlist other than the system catalog. Indexes a foreign
 * key uses are never named in its text.
 */
function dependencyHidden(scope: SourceScope, visible: VisibleUri, dep: PartDependencyRow): boolean {
  if (dep.relation !== null) {
    if (dep.relkind === 'i' || dep.relkind === 'I') return false;
    if (dep.schema === null || !scope.allowedSet.has(dep.schema)) return true;
    if (dep.published === true) return !visible(scope.tableUri(dep.schema, dep.relation));
    return dep.relkind !== 'S' && dep.relkind !== 'c';
  }
  return dep.schema !== null && dep.schema !== 'pg_catalog' && !scope.allowedSet.has(dep.schema);
}

/**
 * The schema overview as the caller may see it: only relations whose own
 * resource is visible, and "N more" counts only those too. Relations are
 * scanned in keyset batches until the overview is full.
 */
async function overview(scope: SourceScope, query: RunQuery, schema: SchemaRow, visible: VisibleUri): Promise<string> {
  const shown: RelationSummaryRow[] = [];
  let after = '';
  let more = 0;
  let exhausted = false;
  while (!exhausted && shown.length < OVERVIEW_MAX_RELATIONS) {
    const batch = await listRelations(query, schema.oid, after, OVERVIEW_BATCH);
    exhausted = batch.length < OVERVIEW_BATCH;
    for (const r of batch) {
      after = r.name;
      if (!visible(scope.tableUri(schema.name, r.name))) continue;
      if (shown.length < OVERVIEW_MAX_RELATIONS) shown.push(r);
      else more += 1;
    }
  }
  while (!exhausted) {
    const names = await listRelationNames(query, schema.oid, after, OVERVIEW_BATCH * 10);
    exhausted = names.length < OVERVIEW_BATCH * 10;
    for (const name of names) if (visible(scope.tableUri(schema.name, name))) more += 1;
    after = names.at(-1) ?? after;
  }
  return renderSchemaOverview({
    schema: schema.name,
    comment: schema.comment,
    relations: shown,
    more,
    tableUri: (table) => scope.tableUri(schema.name, table),
    listHint: `List resources, or read ${uriPrefix(scope.sourceId)}{schema}/{table} for any table by name.`,
  });
}

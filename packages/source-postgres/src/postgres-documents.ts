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
  readableRelations,
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
  const [found] = (await findSchemas(query, [schema], '', scope.privileged)).filter((s) => s.name === schema);
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
  grantsVisible: VisibleUri,
  rowsUri: string | undefined,
): Promise<string | undefined> {
  const relation = await findRelation(query, schema, table, scope.privileged);
  if (relation === undefined) return undefined;
  const dependencies = await listPartDependencies(query, relation.oid);
  const incoming = await listReferencedBy(query, relation.oid, scope.allowed, REFERENCED_BY_SCAN);
  const constraints = await listConstraints(query, relation.oid);
  // Under the caller's role, a relation it may not read is one it may not see, like one its grants hide.
  const visible = scope.privileged
    ? await readableOnly(scope, query, grantsVisible, [
        ...dependencies.map((d) => [d.schema, d.relation] as const),
        ...incoming.map((c) => [c.otherSchema, c.otherTable] as const),
        ...constraints.map((c) => [c.otherSchema, c.otherTable] as const),
      ])
    : grantsVisible;
  const hidden = new Set(
    dependencies.filter((dep) => dependencyHidden(scope, visible, dep)).map((dep) => `${dep.part}:${dep.key}`),
  );
  const referencedBy = incoming.filter(
    (c) =>
      c.otherSchema !== null && c.otherTable !== null && relationVisible(scope, visible, c.otherSchema, c.otherTable),
  );
  const columns = (await listColumns(query, relation.oid, scope.privileged)).map((c) =>
    c.typeSchema === 'pg_catalog' || scope.allowedSet.has(c.typeSchema) ? c : { ...c, type: NOT_VISIBLE_TYPE },
  );
  return renderTableDescription({
    ...relation,
    columns,
    constraints,
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

/**
 * `visible`, narrowed to the relations among `named` (schema, name) that the
 * current role may read: one catalog query for all the relations a
 * description mentions.
 */
async function readableOnly(
  scope: SourceScope,
  query: RunQuery,
  visible: VisibleUri,
  named: ReadonlyArray<readonly [string | null, string | null]>,
): Promise<VisibleUri> {
  const unique = new Map<string, readonly [string, string]>();
  for (const [schema, name] of named) {
    if (schema !== null && name !== null && scope.allowedSet.has(schema)) {
      unique.set(scope.tableUri(schema, name), [schema, name]);
    }
  }
  const pairs = [...unique.values()];
  const readable = await readableRelations(
    query,
    pairs.map(([schema]) => schema),
    pairs.map(([, name]) => name),
  );
  const readableUris = new Set(readable.map((r) => scope.tableUri(r.schema, r.name)));
  return (uri) => visible(uri) && (!unique.has(uri) || readableUris.has(uri));
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
    const batch = await listRelations(query, schema.oid, after, OVERVIEW_BATCH, undefined, [], scope.privileged);
    exhausted = batch.length < OVERVIEW_BATCH;
    for (const r of batch) {
      after = r.name;
      if (!visible(scope.tableUri(schema.name, r.name))) continue;
      if (shown.length < OVERVIEW_MAX_RELATIONS) shown.push(r);
      else more += 1;
    }
  }
  while (!exhausted) {
    const names = await listRelationNames(query, schema.oid, after, OVERVIEW_BATCH * 10, scope.privileged);
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

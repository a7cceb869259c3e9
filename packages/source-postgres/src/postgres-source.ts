import {
  DEFAULT_SOURCE_TTL,
  invalidPosition,
  type Logger,
  type Page,
  type PageRequest,
  type ResourceContents,
  type ResourceDescriptor,
  type ResourceTemplateDescriptor,
  type Source,
  type SourceChange,
  type SourceHealth,
  type VisibleUri,
} from '@mcpgw/core';
import pg from 'pg';
import { CatalogChangeFeed } from './catalog-change-feed.js';
import { catalogFingerprint, catalogFingerprintUris } from './catalog-fingerprint.js';
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
import { changeChannel, installEventTrigger } from './event-trigger.js';
import type { PostgresSourceOptions } from './postgres-source-options.js';
import { displayIdent } from './quote-ident.js';
import { narrowSchemas } from './listing-narrowing.js';
import { inReadOnlyTransaction, type RunQuery } from './read-only-transaction.js';
import { readRows } from './read-rows.js';
import { relationSummary, relationTitle, renderSchemaOverview, renderTableDescription } from './render-markdown.js';
import { parseResourceUri, schemaUri, tableUri, uriPrefix } from './resource-uri.js';
import { parseRowsQuery } from './rows-query.js';
import { sourceUnavailable } from './source-unavailable.js';

const MARKDOWN = 'text/markdown';
const JSON_TYPE = 'application/json';
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

/**
 * Builds the `pg` connection settings. Sessions default to read-only as a
 * second line of defence behind the explicit READ ONLY transactions, and
 * carry an application_name so a DBA can tell the gateway's sessions apart.
 *
 * search_path is pinned to `pg_catalog, pg_temp` at connect: unqualified
 * names in the gateway's own SQL (operators, casts, functions) resolve to the
 * system catalog only, never to an object a database user created in a
 * schema on the role's default path. pg_temp is named last because when it
 * is left out it is searched first (for relations and types), which would
 * let a temporary table shadow a catalog one. Being a startup setting it is
 * also what `DISCARD ALL` resets the session to after every read.
 */
export function connectionConfig(options: PostgresSourceOptions, sourceId: string): pg.ClientConfig {
  const c = options.connection;
  const base: pg.ClientConfig =
    'url' in c
      ? { connectionString: c.url }
      : {
          host: c.host,
          port: c.port,
          database: c.database,
          user: c.user,
          ...(c.password === undefined ? {} : { password: c.password }),
        };
  return {
    ...base,
    connectionTimeoutMillis: options.pool.connectionTimeoutMs,
    // Client-side backstop for a server that stops answering mid-query,
    // where the server-side statement_timeout cannot fire.
    query_timeout: options.statementTimeoutMs + options.pool.connectionTimeoutMs,
    application_name: `mcpgw:${sourceId}`.slice(0, 63),
    options: '-c default_transaction_read_only=on -c search_path=pg_catalog,pg_temp',
  };
}

/** A `postgres` source: see README.md for URIs, representations and safety. */
export function createPostgresSource(options: PostgresSourceOptions, sourceId: string, logger: Logger): Source {
  const pool = new pg.Pool({
    ...connectionConfig(options, sourceId),
    max: options.pool.max,
    idleTimeoutMillis: 30_000,
  });
  // An idle client that loses its server (restart, failover) emits 'error' on
  // the pool; unhandled, that would crash the process. The pool drops it and
  // connects afresh on the next request: recovery needs no restart.
  pool.on('error', (error) => logger.warn({ err: { message: error.message } }, 'idle postgres connection failed'));

  const allowed = [...options.schemas];
  const allowedSet = new Set(allowed);
  const timeouts = { statementTimeoutMs: options.statementTimeoutMs, lockTimeoutMs: options.lockTimeoutMs };
  const rowsEnabled = options.rows.enabled;
  const toSchemaUri = (schema: string) => schemaUri(sourceId, schema);
  const toTableUri = (schema: string, table: string) => tableUri(sourceId, schema, table);

  async function run<T>(work: (query: RunQuery) => Promise<T>, signal?: AbortSignal): Promise<T> {
    try {
      return await inReadOnlyTransaction(pool, timeouts, work, signal);
    } catch (error) {
      // The client went away and its query was cancelled: not a source failure.
      if (signal?.aborted) throw error;
      throw sourceUnavailable(sourceId, error, logger);
    }
  }

  function schemaDescriptor(s: SchemaRow): ResourceDescriptor {
    return {
      uri: toSchemaUri(s.name),
      name: s.name,
      title: `Schema ${displayIdent(s.name)}`,
      description:
        s.comment ??
        `Overview of schema ${displayIdent(s.name)}: its tables and views with comments and estimated row counts.`,
      mimeType: MARKDOWN,
    };
  }

  function relationDescriptor(schema: string, r: RelationSummaryRow): ResourceDescriptor {
    return {
      uri: toTableUri(schema, r.name),
      name: `${schema}.${r.name}`,
      title: relationTitle(schema, r),
      description: r.comment ?? relationSummary(schema, r),
      mimeType: MARKDOWN,
    };
  }

  /** Position: JSON `[schema, lastRelationName]`; `''` = just after the schema's own entry. */
  function parsePosition(position: string): [string, string] {
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
      !allowedSet.has(parsed[0]) ||
      parsed[1].includes('\0') ||
      Buffer.byteLength(parsed[1]) > 63
    ) {
      throw invalidPosition();
    }
    return [parsed[0], parsed[1]];
  }

  /**
   * Schemas in name order, each followed by its relations in name order.
   * With `page.prefixes` only the allowed schemas and the
   * relation names the caller's grants can reach are asked of the catalog,
   * so no query names or scans another schema; the order and positions are
   * those of the full listing, of which this is the part the prefixes keep.
   */
  async function listResources(page: PageRequest, signal?: AbortSignal): Promise<Page<ResourceDescriptor>> {
    const [fromSchema, fromName] = page.position === undefined ? ['', undefined] : parsePosition(page.position);
    const limit = Math.max(1, Math.floor(page.limit));
    const narrowing = page.prefixes === undefined ? undefined : narrowSchemas(sourceId, allowed, page.prefixes);
    if (narrowing?.length === 0) return { items: [] };
    const byName = new Map(narrowing?.map((n) => [n.schema, n]));
    const schemas = narrowing === undefined ? allowed : narrowing.map((n) => n.schema);
    return run(async (query) => {
      const items: ResourceDescriptor[] = [];
      let last: [string, string] | undefined;
      for (const schema of await findSchemas(query, schemas, fromSchema)) {
        const narrowed = byName.get(schema.name);
        let after = schema.name === fromSchema ? fromName : undefined;
        if (after === undefined) {
          if (narrowed?.schemaEntry !== false) {
            if (items.length === limit) return { items, nextPosition: JSON.stringify(last) };
            items.push(schemaDescriptor(schema));
            last = [schema.name, ''];
          }
          after = '';
        }
        const room = limit - items.length;
        if (room === 0) return { items, nextPosition: JSON.stringify([schema.name, after]) };
        const relations = await listRelations(query, schema.oid, after, room + 1, narrowed?.tables);
        for (const r of relations.slice(0, room)) {
          items.push(relationDescriptor(schema.name, r));
          last = [schema.name, r.name];
        }
        if (relations.length > room) return { items, nextPosition: JSON.stringify(last) };
      }
      return { items };
    }, signal);
  }

  function listTemplates(): Promise<ResourceTemplateDescriptor[]> {
    // Templates are shared by every caller of the tenant (and cached as such),
    // so they name no schema: a caller learns schemas from the resources it
    // may list.
    const templates: ResourceTemplateDescriptor[] = [
      {
        uriTemplate: `${uriPrefix(sourceId)}{schema}/{table}`,
        name: `${sourceId}-table`,
        title: `Table or view in ${sourceId}`,
        description: `Columns, keys, indexes and comments of a table or view, by schema and name; the schemas are the schema resources of ${sourceId}. Names are case-sensitive, exactly as in the catalog.`,
        mimeType: MARKDOWN,
      },
    ];
    if (rowsEnabled) {
      templates.push({
        uriTemplate: `${uriPrefix(sourceId)}{schema}/{table}/rows{?limit,after,columns}`,
        name: `${sourceId}-rows`,
        title: `Rows of a table or view in ${sourceId}`,
        description: `Up to ${options.rows.maxLimit} rows (limit, default ${options.rows.maxLimit}) as JSON, ordered by primary key; follow "next" for the following page; columns is an optional comma-separated list.`,
        mimeType: JSON_TYPE,
      });
    }
    return Promise.resolve(templates);
  }

  /** Whether the caller may see relation `schema.name` (a published kind) of this source. */
  function relationVisible(visible: VisibleUri, schema: string, name: string): boolean {
    return allowedSet.has(schema) && visible(toTableUri(schema, name));
  }

  /**
   * Whether a part of a description whose expression depends on `dep` would
   * name something the caller may not see: a relation outside the caller's
   * view (or a partition, which is no resource), or any object in a schema
   * outside the allowlist other than the system catalog. Indexes a foreign
   * key uses are never named in its text.
   */
  function dependencyHidden(visible: VisibleUri, dep: PartDependencyRow): boolean {
    if (dep.relation !== null) {
      if (dep.relkind === 'i' || dep.relkind === 'I') return false;
      if (dep.schema === null || !allowedSet.has(dep.schema)) return true;
      if (dep.published === true) return !visible(toTableUri(dep.schema, dep.relation));
      return dep.relkind !== 'S' && dep.relkind !== 'c';
    }
    return dep.schema !== null && dep.schema !== 'pg_catalog' && !allowedSet.has(dep.schema);
  }

  /**
   * The schema overview as the caller may see it: only relations whose own
   * resource is visible, and "N more" counts only those too. Relations are
   * scanned in keyset batches until the overview is full.
   */
  async function overview(query: RunQuery, schema: SchemaRow, visible: VisibleUri): Promise<string> {
    const shown: RelationSummaryRow[] = [];
    let after = '';
    let more = 0;
    let exhausted = false;
    while (!exhausted && shown.length < OVERVIEW_MAX_RELATIONS) {
      const batch = await listRelations(query, schema.oid, after, OVERVIEW_BATCH);
      exhausted = batch.length < OVERVIEW_BATCH;
      for (const r of batch) {
        after = r.name;
        if (!visible(toTableUri(schema.name, r.name))) continue;
        if (shown.length < OVERVIEW_MAX_RELATIONS) shown.push(r);
        else more += 1;
      }
    }
    while (!exhausted) {
      const names = await listRelationNames(query, schema.oid, after, OVERVIEW_BATCH * 10);
      exhausted = names.length < OVERVIEW_BATCH * 10;
      for (const name of names) if (visible(toTableUri(schema.name, name))) more += 1;
      after = names.at(-1) ?? after;
    }
    return renderSchemaOverview({
      schema: schema.name,
      comment: schema.comment,
      relations: shown,
      more,
      tableUri: (table) => toTableUri(schema.name, table),
      listHint: `List resources, or read ${uriPrefix(sourceId)}{schema}/{table} for any table by name.`,
    });
  }

  async function read(
    uri: string,
    signal?: AbortSignal,
    visible: VisibleUri = () => true,
  ): Promise<ResourceContents[] | undefined> {
    const parsed = parseResourceUri(sourceId, uri);
    if (parsed === undefined || !allowedSet.has(parsed.schema)) return undefined;
    if (parsed.kind === 'schema') {
      const schema = parsed.schema;
      const text = await run(async (query) => {
        const [found] = (await findSchemas(query, [schema])).filter((s) => s.name === schema);
        return found === undefined ? undefined : overview(query, found, visible);
      }, signal);
      return text === undefined ? undefined : [{ uri, mimeType: MARKDOWN, text }];
    }
    if (parsed.kind === 'table') {
      const { schema, table } = parsed;
      const text = await run(async (query) => {
        const relation = await findRelation(query, schema, table);
        if (relation === undefined) return undefined;
        const hidden = new Set(
          (await listPartDependencies(query, relation.oid))
            .filter((dep) => dependencyHidden(visible, dep))
            .map((dep) => `${dep.part}:${dep.key}`),
        );
        const incoming = await listReferencedBy(query, relation.oid, allowed, REFERENCED_BY_SCAN);
        const referencedBy = incoming.filter(
          (c) =>
            c.otherSchema !== null && c.otherTable !== null && relationVisible(visible, c.otherSchema, c.otherTable),
        );
        const columns = (await listColumns(query, relation.oid)).map((c) =>
          c.typeSchema === 'pg_catalog' || allowedSet.has(c.typeSchema) ? c : { ...c, type: NOT_VISIBLE_TYPE },
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
          schemaUri: toSchemaUri(schema),
          relationUri: (s, t) => (relationVisible(visible, s, t) ? toTableUri(s, t) : undefined),
          rowsUri: rowsEnabled ? `${toTableUri(schema, table)}/rows` : undefined,
        });
      }, signal);
      return text === undefined ? undefined : [{ uri, mimeType: MARKDOWN, text }];
    }
    if (!rowsEnabled) return undefined;
    const request = parseRowsQuery(parsed.query, options.rows.maxLimit);
    const { schema, table } = parsed;
    const page = await run(async (query) => {
      const relation = await findRelation(query, schema, table);
      if (relation === undefined) return undefined;
      return readRows(query, relation, request, options.rows.columns.exclude, `${toTableUri(schema, table)}/rows`);
    }, signal);
    return page === undefined ? undefined : [{ uri, mimeType: JSON_TYPE, text: page.text }];
  }

  let feed: CatalogChangeFeed | undefined;
  let closed: Promise<void> | undefined;
  const mode = options.changeDetection.mode;
  function watch(listener: (change: SourceChange) => void): () => void {
    if (mode === 'off' || closed !== undefined) return () => {};
    feed ??= new CatalogChangeFeed({
      sourceId,
      mode,
      pollIntervalMs: options.changeDetection.pollIntervalMs,
      // Not through run(): the feed logs its failures itself, condensed.
      fingerprint: () => inReadOnlyTransaction(pool, timeouts, (query) => catalogFingerprint(query, allowed)),
      uris: catalogFingerprintUris({ schema: toSchemaUri, table: toTableUri }),
      install: () => installEventTrigger(pool, changeChannel(sourceId)),
      newClient: () => new pg.Client(connectionConfig(options, sourceId)),
      channel: changeChannel(sourceId),
      logger,
    });
    return feed.watch(listener);
  }

  async function health(): Promise<SourceHealth> {
    try {
      await run((query) => query('SELECT 1', []));
      return { ok: true };
    } catch (error) {
      return { ok: false, detail: error instanceof Error ? error.message : 'unavailable' };
    }
  }

  function close(): Promise<void> {
    closed ??= (async () => {
      await feed?.stop();
      await pool.end();
    })();
    return closed;
  }

  return {
    id: sourceId,
    kind: 'postgres',
    ttl: DEFAULT_SOURCE_TTL,
    owns: (uri) => uri.startsWith(uriPrefix(sourceId)),
    listResources,
    listTemplates,
    read,
    ...(mode === 'off' ? {} : { watch, settled: async () => feed?.settled() }),
    health,
    close,
  };
}

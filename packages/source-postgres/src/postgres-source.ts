import {
  DEFAULT_SOURCE_TTL_MS,
  findEgressRefusal,
  type EgressGuard,
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
  sourceFailureReason,
} from '@mcpgw/core';
import { CatalogChangeFeed } from './catalog-change-feed.js';
import { catalogFingerprint, catalogFingerprintUris } from './catalog-fingerprint.js';
import { findRelation } from './catalog-queries.js';
import { connectionConfig } from './connection-config.js';
import { changeChannel, installEventTrigger } from './event-trigger.js';
import { schemaDocument, tableDocument } from './postgres-documents.js';
import { listPostgresResources } from './postgres-listing.js';
import { postgresDriver } from './pg-module.js';
import type { PostgresSourceOptions } from './postgres-source-options.js';
import { inReadOnlyTransaction, type RunQuery } from './read-only-transaction.js';
import { readRows } from './read-rows.js';
import { parseResourceUri, schemaUri, tableUri, uriPrefix } from './resource-uri.js';
import { parseRowsQuery } from './rows-query.js';
import type { SourceScope } from './source-scope.js';
import { sourceUnavailable, sqlState } from './source-unavailable.js';

const MARKDOWN = 'text/markdown';
const JSON_TYPE = 'application/json';

/** A `postgres` source: see README.md for URIs, representations and safety. */
export function createPostgresSource(
  options: PostgresSourceOptions,
  sourceId: string,
  logger: Logger,
  /** Present for a source a tenant admin configured (see SourceContext). */
  egress?: EgressGuard,
): Source {
  const pool = new (postgresDriver().Pool)({
    ...connectionConfig(options, sourceId, egress),
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
  const scope: SourceScope = { sourceId, allowed, allowedSet, schemaUri: toSchemaUri, tableUri: toTableUri };

  async function run<T>(work: (query: RunQuery) => Promise<T>, signal?: AbortSignal): Promise<T> {
    try {
      return await inReadOnlyTransaction(pool, timeouts, work, signal);
    } catch (error) {
      // The client went away and its query was cancelled: not a source failure.
      if (signal?.aborted) throw error;
      throw sourceUnavailable(sourceId, error, logger);
    }
  }

  /** Schemas in name order, each followed by its relations in name order (see listPostgresResources). */
  function listResources(page: PageRequest, signal?: AbortSignal): Promise<Page<ResourceDescriptor>> {
    return listPostgresResources(scope, page, (work) => run(work, signal));
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

  async function read(
    uri: string,
    signal?: AbortSignal,
    visible: VisibleUri = () => true,
  ): Promise<ResourceContents[] | undefined> {
    const parsed = parseResourceUri(sourceId, uri);
    if (parsed === undefined || !allowedSet.has(parsed.schema)) return undefined;
    if (parsed.kind === 'schema') {
      const schema = parsed.schema;
      const text = await run((query) => schemaDocument(scope, query, schema, visible), signal);
      return text === undefined ? undefined : [{ uri, mimeType: MARKDOWN, text }];
    }
    if (parsed.kind === 'table') {
      const { schema, table } = parsed;
      const rowsUri = rowsEnabled ? `${toTableUri(schema, table)}/rows` : undefined;
      const text = await run((query) => tableDocument(scope, query, { schema, table }, visible, rowsUri), signal);
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
      newClient: () => new (postgresDriver().Client)(connectionConfig(options, sourceId, egress)),
      channel: changeChannel(sourceId),
      logger,
    });
    return feed.watch(listener);
  }

  /**
   * The public message and, for an answer of the server (one with a
   * SQLSTATE: `role "x" is not permitted to log in`, `database "x" does not
   * exist`), its words too. Network errors stay out: they name the host and
   * port. The server never quotes a password.
   */
  function healthDetail(error: unknown): string {
    const message = error instanceof Error ? error.message : 'unavailable';
    const cause = error instanceof Error ? error.cause : undefined;
    return sqlState(cause) !== undefined && cause instanceof Error ? `${message}: ${cause.message}` : message;
  }

  async function health(): Promise<SourceHealth> {
    try {
      await run((query) => query('SELECT 1', []));
      return { ok: true };
    } catch (error) {
      // A refusal names the destination and the setting to change (the status is for admins and operators).
      const refused = findEgressRefusal(error);
      return {
        ok: false,
        detail: refused?.message ?? healthDetail(error),
        reason: sourceFailureReason(error),
      };
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
    ttlMs: DEFAULT_SOURCE_TTL_MS,
    owns: (uri) => uri.startsWith(uriPrefix(sourceId)),
    listResources,
    listTemplates,
    read,
    ...(mode === 'off' ? {} : { watch, settled: async () => feed?.settled() }),
    health,
    close,
  };
}

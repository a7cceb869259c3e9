import {
  DEFAULT_SOURCE_TTL_MS,
  findEgressRefusal,
  GatewayError,
  type SourceCaller,
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
import { createCallerIdentity, type CallerPlan } from './caller-identity.js';
import { CatalogChangeFeed } from './catalog-change-feed.js';
import { catalogFingerprint, catalogFingerprintUris } from './catalog-fingerprint.js';
import { findRelation } from './catalog-queries.js';
import { connectionConfig } from './connection-config.js';
import { changeChannel, installEventTrigger } from './event-trigger.js';
import { schemaDocument, tableDocument } from './postgres-documents.js';
import { listPostgresResources } from './postgres-listing.js';
import { postgresDriver } from './pg-module.js';
import type { PostgresSourceOptions } from './postgres-source-options.js';
import {
  inReadOnlyTransaction,
  RoleSwitchRefused,
  type RunQuery,
  type TransactionSession,
} from './read-only-transaction.js';
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
  const callerIdentity = options.callerIdentity;
  const planOf = callerIdentity === undefined ? undefined : createCallerIdentity(callerIdentity, sourceId);
  const scope: SourceScope = {
    sourceId,
    allowed,
    allowedSet,
    schemaUri: toSchemaUri,
    tableUri: toTableUri,
    privileged: planOf !== undefined,
  };

  async function run<T>(
    work: (query: RunQuery) => Promise<T>,
    signal?: AbortSignal,
    session?: TransactionSession,
  ): Promise<T> {
    try {
      return await inReadOnlyTransaction(pool, timeouts, work, signal, session);
    } catch (error) {
      // The client went away and its query was cancelled: not a source failure.
      if (signal?.aborted) throw error;
      if (error instanceof RoleSwitchRefused) throw roleRefused(error);
      throw sourceUnavailable(sourceId, error, logger);
    }
  }

  /**
   * A caller's mapped role that Postgres refuses: never another role's
   * answer. The caller learns what to ask for; the role's name, an
   * operator's setting, goes to the log only.
   */
  function roleRefused(error: RoleSwitchRefused): GatewayError {
    const cause = error.cause as { code?: unknown; message?: unknown };
    logger.warn(
      { role: error.role, err: { code: cause.code, message: cause.message } },
      'postgres source could not switch to the role a caller maps to',
    );
    return new GatewayError(
      'MCPGW_SOURCE_UNAVAILABLE',
      `Postgres source "${sourceId}" is unavailable to you: the database role your claims map to cannot be used (dropped, renamed, or not granted to the gateway's login role); ask an operator to fix the role or callerIdentity`,
      { cause: error },
    );
  }

  /**
   * The caller's plan, or undefined without callerIdentity (everyone reads as
   * the login role). A caller whose claims cannot be passed on gets an error here.
   */
  function planFor(caller: SourceCaller | undefined): Exclude<CallerPlan, { kind: 'unusable' }> | undefined {
    const plan = planOf?.(caller);
    if (plan?.kind === 'unusable') {
      throw new GatewayError(
        'MCPGW_SOURCE_UNAVAILABLE',
        `Postgres source "${sourceId}" is unavailable to you: ${plan.reason}`,
      );
    }
    return plan;
  }

  /** Runs `work` as the caller's plan says: under their role and settings, or as the login role without one. */
  const runFor =
    (plan: Extract<CallerPlan, { kind: 'act' }> | undefined, signal: AbortSignal | undefined) =>
    <T>(work: (query: RunQuery) => Promise<T>): Promise<T> =>
      run(work, signal, plan === undefined ? undefined : { role: plan.role, settings: plan.settings });

  /** Schemas in name order, each followed by its relations in name order (see listPostgresResources). */
  async function listResources(page: PageRequest, signal?: AbortSignal): Promise<Page<ResourceDescriptor>> {
    const plan = planFor(page.caller);
    // Refused: nothing of the source is theirs, as for a caller whose grants name none of it.
    if (plan?.kind === 'refuse') return { items: [] };
    return listPostgresResources(scope, page, runFor(plan, signal));
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
    caller?: SourceCaller,
  ): Promise<ResourceContents[] | undefined> {
    const parsed = parseResourceUri(sourceId, uri);
    if (parsed === undefined || !allowedSet.has(parsed.schema)) return undefined;
    const plan = planFor(caller);
    // Refused: not found, as any resource the caller may not see.
    if (plan?.kind === 'refuse') return undefined;
    const inSession = runFor(plan, signal);
    if (parsed.kind === 'schema') {
      const schema = parsed.schema;
      const text = await inSession((query) => schemaDocument(scope, query, schema, visible));
      return text === undefined ? undefined : [{ uri, mimeType: MARKDOWN, text }];
    }
    if (parsed.kind === 'table') {
      const { schema, table } = parsed;
      const rowsUri = rowsEnabled ? `${toTableUri(schema, table)}/rows` : undefined;
      const text = await inSession((query) => tableDocument(scope, query, { schema, table }, visible, rowsUri));
      return text === undefined ? undefined : [{ uri, mimeType: MARKDOWN, text }];
    }
    if (!rowsEnabled) return undefined;
    const request = parseRowsQuery(parsed.query, options.rows.maxLimit);
    const { schema, table } = parsed;
    const page = await inSession(async (query) => {
      const relation = await findRelation(query, schema, table, scope.privileged);
      if (relation === undefined) return undefined;
      const rowsBase = `${toTableUri(schema, table)}/rows`;
      return readRows(query, relation, request, options.rows.columns.exclude, rowsBase, scope.privileged);
    });
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
    // Answers depend on the caller's role and settings: the caches key them by this.
    ...(planOf === undefined ? {} : { backendIdentity: (caller: SourceCaller | undefined) => planOf(caller).identity }),
    health,
    close,
  };
}

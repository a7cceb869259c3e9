import type { SourceFactory } from '@mcpgw/core';
import { createPostgresSource } from './postgres-source.js';
import { uriPrefix } from './resource-uri.js';
import { postgresSourceOptionsSchema, type PostgresSourceOptions } from './postgres-source-options.js';

/**
 * The `postgres` source type: the allowed schemas of one database, and their
 * tables and views, as described resources (issue 5). Example entry:
 *
 * ```json
 * { "id": "crm", "type": "postgres",
 *   "connection": { "host": "db.internal", "database": "crm", "user": "mcp_reader",
 *                   "password": { "$env": "CRM_DB_PASSWORD" } },
 *   "schemas": ["public", "sales"],
 *   "rows": { "enabled": true, "maxLimit": 50 } }
 * ```
 */
export const postgresSourceFactory: SourceFactory<PostgresSourceOptions> = {
  type: 'postgres',
  optionsSchema: postgresSourceOptionsSchema,
  create: (options, context) => createPostgresSource(options, context.sourceId, context.logger, context.egress),
  // Schema and table segments are never empty.
  uriSpace: (_options, sourceId) => ({ prefixes: [uriPrefix(sourceId)], emptySegments: false }),
};

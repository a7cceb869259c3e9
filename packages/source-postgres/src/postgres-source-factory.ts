import type { SourceFactory } from '@mcpgw/core';
import { createPostgresSource } from './postgres-source.js';
import { uriPrefix } from './resource-uri.js';
import { postgresSourceOptionsSchema, type PostgresSourceOptions } from './postgres-source-options.js';

/**
 * The `postgres` source type: the allowed schemas of one database, and their
 * tables and views, as described resources. Example entry:
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
  model: {
    credentials: ['connection.password'],
    // Where the password is sent; the role name is not a place.
    targets: ['connection.url', 'connection.host', 'connection.port', 'connection.database'],
    urls: [
      {
        path: 'connection.url',
        password: 'connection.password',
        // libpq connection URIs take any connection parameter as a query parameter, and
        // pg-connection-string reads the ssl* ones as paths of files to open on this host.
        passwordParameters: ['password'],
        hostFileParameters: ['sslcert', 'sslkey', 'sslrootcert'],
        socketHosts: true,
      },
    ],
    // A host starting with `/` is a Unix socket folder of the gateway's host (peer authentication
    // would log in as the gateway's own OS user).
    socketHosts: ['connection.host'],
    // The roles callers may act as bound what a tenant admin's role mapping can reach: the operator's.
    operatorPaths: ['callerIdentity.roles'],
    operatorOnly: false,
    // Without a password `pg` sends PGPASSWORD or the ~/.pgpass entry of the gateway's own environment.
    ambientCredentials: true,
  },
  // Schema and table segments are never empty.
  uriSpace: (_options, sourceId) => ({ prefixes: [uriPrefix(sourceId)], emptySegments: false }),
};

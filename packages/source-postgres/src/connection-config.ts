import type pg from 'pg';
import type { EgressGuard } from '@mcpgw/core';
import { egressStream } from './egress-stream.js';
import type { PostgresSourceOptions } from './postgres-source-options.js';

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
 *
 * With `egress` (a source a tenant admin configured) every connection goes
 * through the egress guard.
 */
export function connectionConfig(
  options: PostgresSourceOptions,
  sourceId: string,
  egress?: EgressGuard,
): pg.ClientConfig {
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
    ...(egress === undefined ? {} : { stream: egressStream(egress) }),
  };
}

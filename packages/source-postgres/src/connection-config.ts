import type pg from 'pg';
import type { EgressGuard } from '@mcpgw/core';
import { egressStream } from './egress-stream.js';
import type { PostgresSourceOptions } from './postgres-source-options.js';

/**
 * `url` with `password` as its userinfo password. pg-connection-string's
 * parse overrides a separate `password` setting with the URL's (an empty
 * one when it has none), so the password has to travel inside the URL.
 */
function withPassword(url: string, password: string): string {
  const parsed = new URL(url);
  parsed.searchParams.delete('password');
  // Encoded whole (the setter leaves `%` as is); pg-connection-string decodes
  // it with decodeURIComponent (RFC 3986 section 3.2.1).
  parsed.password = encodeURIComponent(password);
  // A URL without a host (a Unix socket named by `?host=`) has no userinfo
  // (WHATWG URL: "cannot have a username/password/port"): libpq's query
  // parameter carries it then.
  if (parsed.password === '' && password !== '') parsed.searchParams.set('password', password);
  return parsed.href;
}

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
      ? { connectionString: c.password === undefined ? c.url : withPassword(c.url, c.password) }
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

// The public surface of @mcpgw/source-postgres: what apps/gateway and bench
// use. Tests reach the other modules by path (../src/<module>.js).

/** The `postgres` source type: schemas and tables as described resources. */
export { postgresSourceFactory } from './postgres-source-factory.js';
/** Creates a Postgres source from parsed options (bench builds one without the config layer). */
export { createPostgresSource } from './postgres-source.js';
/** Validates a `postgres` source entry's options. */
export { postgresSourceOptionsSchema } from './postgres-source-options.js';
/** The options of `callerIdentity`: each caller's reads under a database role mapped from their claims. */
export type { CallerIdentityOptions } from './postgres-source-options.js';

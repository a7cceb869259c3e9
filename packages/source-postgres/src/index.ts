export { postgresSourceFactory } from './postgres-source-factory.js';
export { createPostgresSource } from './postgres-source.js';
export {
  postgresSourceOptionsSchema,
  type ExcludedColumn,
  type PostgresSourceConfig,
  type PostgresSourceOptions,
} from './postgres-source-options.js';
export { decodeSegment, encodeSegment, parseResourceUri, schemaUri, tableUri, uriPrefix } from './resource-uri.js';
export type { ParsedUri } from './resource-uri.js';
export { quoteIdent } from './quote-ident.js';

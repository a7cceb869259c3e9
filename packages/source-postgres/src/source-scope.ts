/**
 * What one Postgres source's listing and documents share: its id, the
 * allowed schemas and its resource URIs.
 */
export interface SourceScope {
  readonly sourceId: string;
  /** The allowed schemas, in configuration order. */
  readonly allowed: readonly string[];
  readonly allowedSet: ReadonlySet<string>;
  schemaUri(schema: string): string;
  tableUri(schema: string, table: string): string;
}

/**
 * What one Postgres source's listing and documents share: its id, the
 * allowed schemas and its resource URIs.
 */
export interface SourceScope {
  readonly sourceId: string;
  /** The allowed schemas, in configuration order. */
  readonly allowed: readonly string[];
  readonly allowedSet: ReadonlySet<string>;
  /**
   * True when every query runs under the caller's database role
   * (`callerIdentity`): the catalog then keeps only the schemas, relations
   * and columns that role may use (see `Privileged` in catalog-queries.ts).
   */
  readonly privileged: boolean;
  schemaUri(schema: string): string;
  tableUri(schema: string, table: string): string;
}

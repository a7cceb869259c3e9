/**
 * Quotes a Postgres identifier for interpolation into SQL text: always
 * double-quoted, embedded double quotes doubled (PostgreSQL docs, "Lexical
 * Structure", 4.1.1: "to include a double quote, write two double quotes").
 * Always quoting keeps case and makes keywords harmless.
 *
 * Only ever call this with a name that was first read back from the catalog:
 * quoting makes a name inert, checking it against the catalog makes it real.
 * NUL cannot appear in a Postgres identifier, so it is refused outright.
 */
export function quoteIdent(name: string): string {
  if (name.length === 0 || name.includes('\0')) {
    throw new TypeError('not a valid Postgres identifier');
  }
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * How a name is shown to a model: bare when Postgres would read it back
 * unchanged without quotes, else quoted (so `"Order Items"` and `public.users`).
 * Display only; SQL text always goes through `quoteIdent`.
 */
export function displayIdent(name: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(name) ? name : quoteIdent(name);
}

/** `schema.table` for display, each part quoted only when needed. */
export function displayQualified(schema: string, table: string): string {
  return `${displayIdent(schema)}.${displayIdent(table)}`;
}

/**
 * The URI space of a postgres source (README.md, "URIs"):
 *
 *   db+postgres:///{sourceId}/{schema}                   schema overview
 *   db+postgres:///{sourceId}/{schema}/{table}           table or view
 *   db+postgres:///{sourceId}/{schema}/{table}/rows?...  rows (when enabled)
 *
 * A custom scheme (MCP 2026-07-28, Resources, "Custom URI Schemes": RFC 3986) with
 * an empty authority, so no host is ever implied, and the source id first so
 * a URI routes to exactly one source.
 */

/** RFC 3986 section 2.3 unreserved characters: the only ones left unescaped. */
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
/** What a canonical segment may contain: unreserved characters and `%XX`. */
const CANONICAL_SEGMENT = /^(?:[A-Za-z0-9\-._~]|%[0-9A-F]{2})+$/;
/** Postgres truncates identifiers to 63 bytes, so no catalog name is longer. */
const MAX_IDENTIFIER_BYTES = 63;

/** The prefix every URI of source `sourceId` starts with. */
export function uriPrefix(sourceId: string): string {
  return `db+postgres:///${sourceId}/`;
}

/**
 * Percent-encodes one identifier exactly as an RFC 6570 simple expansion
 * (`{table}`) does: every octet of its UTF-8 form outside the unreserved set
 * becomes uppercase `%XX`. So a client that expands our template and the URIs
 * we list produce byte-identical strings.
 */
export function encodeSegment(value: string): string {
  let out = '';
  for (const char of value) {
    if (UNRESERVED.test(char)) {
      out += char;
      continue;
    }
    for (const byte of Buffer.from(char, 'utf8')) {
      out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    }
  }
  return out;
}

/**
 * The identifier a segment names, or `undefined` unless the segment is in the
 * canonical form `encodeSegment` produces. Accepting only one spelling per
 * name means a URI pattern in a grant (`.../public/secrets`) cannot be
 * side-stepped with an equivalent spelling (`.../public/%73ecrets`).
 */
export function decodeSegment(segment: string): string | undefined {
  if (!CANONICAL_SEGMENT.test(segment)) return undefined;
  const bytes = Buffer.from(
    segment.replace(/%([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
    'latin1',
  );
  if (bytes.length > MAX_IDENTIFIER_BYTES || bytes.includes(0)) return undefined;
  let value: string;
  try {
    value = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
  return encodeSegment(value) === segment ? value : undefined;
}

export function schemaUri(sourceId: string, schema: string): string {
  return `${uriPrefix(sourceId)}${encodeSegment(schema)}`;
}

export function tableUri(sourceId: string, schema: string, table: string): string {
  return `${schemaUri(sourceId, schema)}/${encodeSegment(table)}`;
}

/** What a URI of this source addresses; `query` is the raw text after `?`. */
export type ParsedUri =
  | { kind: 'schema'; schema: string }
  | { kind: 'table'; schema: string; table: string }
  | { kind: 'rows'; schema: string; table: string; query: string | undefined };

/** Parses a URI of this source; `undefined` for anything malformed. */
export function parseResourceUri(sourceId: string, uri: string): ParsedUri | undefined {
  const prefix = uriPrefix(sourceId);
  if (!uri.startsWith(prefix) || uri.includes('#')) return undefined;
  const rest = uri.slice(prefix.length);
  const queryAt = rest.indexOf('?');
  const path = queryAt === -1 ? rest : rest.slice(0, queryAt);
  const query = queryAt === -1 ? undefined : rest.slice(queryAt + 1);
  const segments = path.split('/');
  const schema = decodeSegment(segments[0] ?? '');
  if (schema === undefined) return undefined;
  if (segments.length === 1) return query === undefined ? { kind: 'schema', schema } : undefined;
  const table = decodeSegment(segments[1] ?? '');
  if (table === undefined) return undefined;
  if (segments.length === 2) return query === undefined ? { kind: 'table', schema, table } : undefined;
  if (segments.length === 3 && segments[2] === 'rows') return { kind: 'rows', schema, table, query };
  return undefined;
}

import { isServableName } from './path-segment.js';

/**
 * Resource URIs of a files source: `file:///{sourceId}/{path}` for a file and
 * `file:///{sourceId}/{path}/` (trailing slash) for a folder, the root folder
 * being `file:///{sourceId}/`. The source id names the source (so URIs route
 * to it) and stands in for the root folder, whose location never appears.
 * Each path segment is percent-encoded (RFC 3986 section 2.1, `pchar`), so
 * spaces and non-ASCII names round-trip.
 */
export function fileUriPrefix(sourceId: string): string {
  return `file:///${sourceId}/`;
}

/** The URI of a file (`directory` false) or folder at `segments` below the root. */
export function toFileUri(sourceId: string, segments: readonly string[], directory: boolean): string {
  const path = segments.map(encodeURIComponent).join('/');
  return fileUriPrefix(sourceId) + path + (directory && segments.length > 0 ? '/' : '');
}

export interface ParsedFileUri {
  /** Decoded names from the root down; empty for the root folder. */
  segments: string[];
  /** Whether the URI names a folder (it ends with `/`). */
  directory: boolean;
}

/**
 * Parses a URI of this source, or returns `undefined` for anything that is
 * not exactly a URI `toFileUri` produces (MCP 2026-07-28, Resources, Security
 * Considerations: "Servers MUST sanitize file paths to prevent directory
 * traversal attacks"). Refused: `.` and `..` segments, encoded or not
 * (`%2e%2e`); backslashes and encoded slashes; NUL and control characters;
 * empty segments (`//`); a query or fragment; hidden names; and any other
 * spelling of a path than the canonical one (e.g. `%61` for `a`, lowercase
 * hex), so a resource has exactly one URI and a URI pattern in a grant cannot
 * be sidestepped by re-encoding.
 */
export function parseFileUri(sourceId: string, uri: string): ParsedFileUri | undefined {
  const prefix = fileUriPrefix(sourceId);
  if (!uri.startsWith(prefix)) return undefined;
  const rest = uri.slice(prefix.length);
  if (rest === '') return { segments: [], directory: true };
  const directory = rest.endsWith('/');
  const raw = (directory ? rest.slice(0, -1) : rest).split('/');
  const segments: string[] = [];
  for (const encoded of raw) {
    let name: string;
    try {
      name = decodeURIComponent(encoded);
    } catch {
      return undefined;
    }
    if (!isServableName(name) || encodeURIComponent(name) !== encoded) return undefined;
    segments.push(name);
  }
  return { segments, directory };
}

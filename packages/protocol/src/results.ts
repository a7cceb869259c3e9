import type { ServerIdentity } from './resource-service.js';

export const SERVER_INFO_META = 'io.modelcontextprotocol/serverInfo';

/**
 * The gateway's own `_meta` key on a listing that is missing sources whose
 * backend could not be reached: their ids, in configuration order. A vendor
 * key in reverse-DNS form, as 2026-07-28 basic/index (`_meta`, Key name
 * format) asks of anything not defined by MCP; its second label is `mcpgw`,
 * so it is outside the prefixes reserved for MCP (`mcp`, `modelcontextprotocol`).
 */
export const UNAVAILABLE_SOURCES_META = 'dev.mcpgw/unavailableSources';

/**
 * The gateway's `_meta` key on a listing some of whose sources left entries
 * out because a configured bound of the source was reached (for a files
 * source, a folder with more than `maxEntries` entries): their ids, in
 * configuration order. Unlike `unavailableSources` the cut is the same on
 * every request, so the page stays cacheable; the operator raises the bound.
 */
export const INCOMPLETE_SOURCES_META = 'dev.mcpgw/incompleteSources';

export type CacheScope = 'public' | 'private';

/** `_meta` carried by every modern result (2026-07-28 basic/index, `_meta`: serverInfo SHOULD be included). */
export function resultMeta(server: ServerIdentity): Record<string, unknown> {
  return { [SERVER_INFO_META]: implementation(server) };
}

/**
 * `_meta` members saying a listing is partial, for both eras: nothing when
 * every source answered, else the ids of those that did not. The page carries
 * `ttlMs: 0` as well, so the notice is never outlived by a cached copy.
 */
export function partialResultMeta(
  unavailableSources: readonly string[] | undefined,
  incompleteSources?: readonly string[] | undefined,
): Record<string, unknown> {
  return {
    ...(unavailableSources === undefined || unavailableSources.length === 0
      ? {}
      : { [UNAVAILABLE_SOURCES_META]: [...unavailableSources] }),
    ...(incompleteSources === undefined || incompleteSources.length === 0
      ? {}
      : { [INCOMPLETE_SOURCES_META]: [...incompleteSources] }),
  };
}

/** The `Implementation` object: name, version, optional title. */
export function implementation(server: ServerIdentity): { name: string; version: string; title?: string } {
  return server.title === undefined
    ? { name: server.name, version: server.version }
    : { name: server.name, version: server.version, title: server.title };
}

/** Drops `undefined` members so results serialise without `"key": undefined` noise. */
export function compact<T extends Record<string, unknown>>(value: T): T {
  for (const key of Object.keys(value)) {
    if (value[key] === undefined) delete value[key];
  }
  return value;
}

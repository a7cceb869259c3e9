import type { ServerIdentity } from './resource-service.js';

export const SERVER_INFO_META = 'io.modelcontextprotocol/serverInfo';

export type CacheScope = 'public' | 'private';

/** `_meta` carried by every modern result (2026-07-28 basic/index, `_meta`: serverInfo SHOULD be included). */
export function resultMeta(server: ServerIdentity): Record<string, unknown> {
  return { [SERVER_INFO_META]: implementation(server) };
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

import type { ExtraResource } from './authorization-server-options.js';

/** A resource tokens may be issued for, and the scopes a token for it may carry. */
export interface ResourceServer {
  readonly uri: string;
  readonly scopes: readonly string[];
}

/** The configured resources by normalized URI, so `HTTP://127.0.0.1:8080/...` finds `http://127.0.0.1:8080/...`. */
export type ResourceIndex = ReadonlyMap<string, ResourceServer>;

/**
 * Validates the resources and indexes them: the tenant's MCP resource URIs,
 * each offering every scope, then the extra ones with their own. RFC 8707
 * section 2: a resource indicator "MUST be an absolute URI" and "MUST NOT
 * include a fragment component".
 */
export function indexResources(
  resources: readonly string[],
  scopes: readonly string[],
  extra: readonly ExtraResource[] = [],
): ResourceIndex {
  const index = new Map<string, ResourceServer>();
  for (const resource of [...resources.map((uri) => ({ uri, scopes })), ...extra]) {
    const key = normalizeResource(resource.uri);
    if (key === undefined) {
      throw new Error(
        `authorization server: resource ${JSON.stringify(resource.uri)} must be an absolute http(s) URI without a fragment`,
      );
    }
    index.set(key, { uri: resource.uri, scopes: [...new Set(resource.scopes)] });
  }
  return index;
}

/** The key a resource indicator is looked up by; undefined when it cannot name one of ours. */
export function normalizeResource(uri: string): string | undefined {
  if (uri.includes('#')) return undefined;
  const url = URL.parse(uri);
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) return undefined;
  return url.href;
}

import type { Grant, GrantAllow } from './grant.js';
import type { UriPattern } from './uri-pattern.js';
import { compileUriPattern } from './uri-pattern.js';

/**
 * A tenant's grants with every URI pattern compiled, built once when the
 * tenant is loaded so a request only runs matchers, never compiles them.
 */
export interface CompiledGrants {
  readonly grants: readonly Grant[];
  /** The compiled `uris` of each allow entry that has them. */
  readonly patterns: ReadonlyMap<GrantAllow, readonly UriPattern[]>;
}

export function compileGrants(grants: readonly Grant[]): CompiledGrants {
  const patterns = new Map<GrantAllow, readonly UriPattern[]>();
  for (const grant of grants) {
    for (const allow of grant.allow) {
      if (allow.uris !== undefined) patterns.set(allow, allow.uris.map(compileUriPattern));
    }
  }
  return { grants, patterns };
}

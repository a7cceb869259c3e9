import type { Principal } from '@mcpgw/core';

/**
 * An independent oracle of what grants let a principal see, for property
 * tests: a plain recursive glob matcher and the grant rules read straight
 * from their definition, never the compiled matchers the gateway uses. `*`
 * stays within one path segment, `**` crosses them.
 */
export interface OracleGrant {
  readonly match: {
    readonly scopes?: readonly string[];
    readonly groups?: readonly string[];
    readonly subjects?: readonly string[];
  };
  readonly allow: ReadonlyArray<{ readonly source: string; readonly uris?: readonly string[] }>;
}

export function globMatches(pattern: string, text: string): boolean {
  if (pattern === '') return text === '';
  if (pattern.startsWith('**')) {
    for (let i = 0; i <= text.length; i += 1) if (globMatches(pattern.slice(2), text.slice(i))) return true;
    return false;
  }
  if (pattern.startsWith('*')) {
    for (let i = 0; i <= text.length && !text.slice(0, i).includes('/'); i += 1) {
      if (globMatches(pattern.slice(1), text.slice(i))) return true;
    }
    return false;
  }
  return text.startsWith(pattern[0]!) && globMatches(pattern.slice(1), text.slice(1));
}

/** The grants whose `match` the principal satisfies (every listed kind needs one value in common). */
export function oracleMatching<G extends OracleGrant>(grants: readonly G[], who: Principal): G[] {
  const has = (want: readonly string[] | undefined, held: readonly string[]) =>
    want === undefined || want.some((w) => held.includes(w));
  return grants.filter(
    (g) => has(g.match.scopes, who.scopes) && has(g.match.groups, who.groups) && has(g.match.subjects, [who.subject]),
  );
}

/** Whether any matching grant allows the source at all. */
export function oracleAllowsSource(grants: readonly OracleGrant[], who: Principal, source: string): boolean {
  return oracleMatching(grants, who).some((g) => g.allow.some((a) => a.source === source));
}

/** Whether any matching grant allows `uri` of `source`. */
export function oracleAllows(grants: readonly OracleGrant[], who: Principal, source: string, uri: string): boolean {
  return oracleMatching(grants, who).some((g) =>
    g.allow.some((a) => a.source === source && (a.uris === undefined || a.uris.some((p) => globMatches(p, uri)))),
  );
}

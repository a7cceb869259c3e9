/**
 * A grant: who it applies to (`match`) and what it shows them (`allow`).
 * Within one matcher list any value suffices (OR); every matcher that is
 * present must be satisfied (AND); an empty `match` applies to every
 * authenticated caller of the tenant. A caller's access is the union of the
 * grants that match.
 */
export interface Grant {
  /** Unique within the tenant; appears in audits. */
  name: string;
  match: GrantMatch;
  allow: readonly GrantAllow[];
}

export interface GrantMatch {
  scopes?: readonly string[];
  groups?: readonly string[];
  subjects?: readonly string[];
  clientIds?: readonly string[];
  issuers?: readonly string[];
}

export interface GrantAllow {
  /** A source id of the tenant. */
  source: string;
  /**
   * URI patterns within that source; absent means all of it. `*` matches
   * within one path segment, `**` across segments; everything else is literal.
   * So `file:///docs/public/**` is a prefix and `db:///sales/*` one level.
   */
  uris?: readonly string[];
}

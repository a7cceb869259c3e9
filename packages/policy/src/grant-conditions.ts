import type { Principal } from '@mcpgw/core';
import type { GrantMatch } from './grant.js';

/** One matcher of a grant's `match`. */
export type GrantMatcher = keyof GrantMatch;

/** A matcher the principal does not satisfy: the values it asks for one of, and the ones the principal holds. */
export interface UnmetCondition {
  readonly matcher: GrantMatcher;
  readonly wants: readonly string[];
  readonly held: readonly string[];
}

/** What of the principal each matcher reads, in the order conditions are reported. */
const HELD: { readonly [M in GrantMatcher]: (principal: Principal) => readonly string[] } = {
  scopes: (principal) => principal.scopes,
  groups: (principal) => principal.groups,
  subjects: (principal) => [principal.subject],
  clientIds: (principal) => (principal.clientId === undefined ? [] : [principal.clientId]),
  issuers: (principal) => [principal.issuer],
};
const MATCHERS = Object.keys(HELD) as GrantMatcher[];
const NONE: readonly UnmetCondition[] = Object.freeze([]);

/**
 * The conditions of `match` the principal fails, empty when it matches: an
 * absent matcher imposes nothing; a present one needs one value in common
 * (OR within a list, AND across lists, as {@link Grant} defines). The one
 * rule the gateway resolves grants by (`matchingGrants`) and the console
 * explains them with, so the explanation cannot drift from the decision.
 */
export function unmetConditions(match: GrantMatch, principal: Principal): readonly UnmetCondition[] {
  return check(match, principal, false);
}

/** Whether the principal satisfies `match`: {@link unmetConditions} stopping at the first failure. */
export function satisfiesMatch(match: GrantMatch, principal: Principal): boolean {
  return check(match, principal, true).length === 0;
}

function check(match: GrantMatch, principal: Principal, firstOnly: boolean): readonly UnmetCondition[] {
  let unmet: UnmetCondition[] | undefined;
  for (const matcher of MATCHERS) {
    const wants = match[matcher];
    if (wants === undefined) continue;
    const held = HELD[matcher](principal);
    if (wants.some((value) => held.includes(value))) continue;
    (unmet ??= []).push({ matcher, wants, held });
    if (firstOnly) break;
  }
  return unmet ?? NONE;
}

// The public surface of @mcpgw/policy: what apps/gateway, @mcpgw/config and
// other packages' tests use. Tests reach the other modules by path (../src/<module>.js).

/** A grant as written in the bootstrap file: who it matches and what it allows. */
export type { Grant, GrantMatch } from './grant.js';
/** Compiles a tenant's grants once, at load. */
export { compileGrants, type CompiledGrants } from './compile-grants.js';
/** A principal's access scope under the compiled grants, with its fingerprint. */
export { resolveAccess } from './resolve-access.js';
/** The grants a principal matches (the admin preview's "which grants apply"). */
export { matchingGrants } from './resolve-access.js';
/** Which conditions of a grant's `match` a principal fails: the rule `matchingGrants` applies (the console explains with it). */
export { unmetConditions } from './grant-conditions.js';
export type { GrantMatcher, UnmetCondition } from './grant-conditions.js';
/** Why a grant URI pattern is refused at load (config validation), or undefined. */
export { grantPatternProblem } from './grant-pattern-problem.js';
export { listingPrefixesOf, listingRangeOf, listingRangesOf, literalPrefix } from './listing-prefixes.js';

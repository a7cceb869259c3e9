export type { Grant, GrantAllow, GrantMatch } from './grant.js';
export type { CompiledGrants } from './compile-grants.js';
export { compileGrants } from './compile-grants.js';
export { resolveAccess, canonicalJson } from './resolve-access.js';
export type { UriPattern } from './uri-pattern.js';
export { compileUriPattern, isAmbiguousUri } from './uri-pattern.js';
export { grantPatternProblem } from './grant-pattern-problem.js';
export { listingPrefixesOf, literalPrefix } from './listing-prefixes.js';

export type { Grant, GrantAllow, GrantMatch } from './grant.js';
export { resolveAccess, canonicalJson } from './resolve-access.js';
export { compileUriPattern, isAmbiguousUri } from './uri-pattern.js';

import { normalizePrefixes } from '@mcpgw/core';

/**
 * The literal start of a URI pattern: everything before its first `*`. Every
 * URI the pattern matches starts with it, since a pattern's literals must be
 * matched in order from the URI's first character (see `compileUriPattern`).
 */
export function literalPrefix(pattern: string): string {
  const star = pattern.indexOf('*');
  return star === -1 ? pattern : pattern.slice(0, star);
}

/**
 * The URI prefixes a caller's patterns for one source allow a listing to be
 * narrowed to (issue 15): their literal starts, normalized. `'all'` (the
 * whole source granted) and any pattern without a literal start give
 * `undefined`, a full scan. An empty result means no pattern, so nothing of
 * the source is visible.
 */
export function listingPrefixesOf(patterns: readonly string[] | 'all'): string[] | undefined {
  if (patterns === 'all') return undefined;
  const prefixes = normalizePrefixes(patterns.map(literalPrefix));
  return prefixes[0] === '' ? undefined : prefixes;
}

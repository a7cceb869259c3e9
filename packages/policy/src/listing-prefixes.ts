import { normalizeRanges, type ListingRange } from '@mcpgw/core';

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
 * What one pattern reaches: its literal start, then a subtree when a `**`
 * follows (it crosses `/`), one URI when nothing follows, and otherwise as
 * many levels as the rest holds `/` (a single `*` stays within a segment);
 * complete when nothing but stars follows.
 */
export function listingRangeOf(pattern: string): ListingRange {
  const prefix = literalPrefix(pattern);
  const rest = pattern.slice(prefix.length);
  if (rest === '') return { prefix, exact: true, complete: true };
  // Only stars after the prefix: the range admits exactly what the pattern matches.
  const complete = /^\*+$/.test(rest) ? { complete: true } : {};
  if (rest.includes('**')) return { prefix, ...complete };
  return { prefix, depth: rest.split('/').length - 1, ...complete };
}

/**
 * The ranges a caller's patterns for one source allow a listing to be
 * narrowed to, normalized. `'all'` (the whole source granted) and
 * any pattern without a literal start give `undefined`, a full scan. An empty
 * result means no pattern, so nothing of the source is visible.
 */
export function listingRangesOf(patterns: readonly string[] | 'all'): ListingRange[] | undefined {
  if (patterns === 'all') return undefined;
  const ranges = normalizeRanges(patterns.map(listingRangeOf));
  return ranges[0]?.prefix === '' ? undefined : ranges;
}

/** The prefixes of {@link listingRangesOf}: the literal starts, normalized. */
export function listingPrefixesOf(patterns: readonly string[] | 'all'): string[] | undefined {
  return listingRangesOf(patterns)?.map((range) => range.prefix);
}

import { compareCodeUnits } from './uri-prefixes.js';

/**
 * What a caller's grants can reach of a source, one range per literal prefix:
 * every URI the caller may see starts with `prefix` and, after it, holds at
 * most `depth` `/` (absent: any number, a whole subtree), or is `prefix`
 * itself when `exact`. A pattern `s3:///lake/reports/**` gives the subtree of
 * `s3:///lake/reports/`, `s3:///lake/reports/*.csv` depth 0 (one level: a
 * single `*` never crosses a `/`), `s3:///lake/reports/*\/summary.md` depth 1
 * and a pattern without a wildcard names one URI (exact). A source may list
 * only what its ranges admit ({@link rangeAdmits}): that follows from the
 * grants alone, so it is the same for every caller with the same grants, and
 * it never admits less than the grants do (the catalog still filters).
 */
export interface ListingRange {
  readonly prefix: string;
  readonly depth?: number;
  readonly exact?: boolean;
  /**
   * Every URI the range admits is granted (the patterns end in their only
   * wildcard, `reports/**` or `reports/*`), so nothing in it is passed over
   * and a source can ask its backend for just a page's worth.
   */
  readonly complete?: boolean;
}

/** Whether `uri` lies in `range` (starts with its prefix and is shaped as it says). */
export function rangeAdmits(range: ListingRange, uri: string): boolean {
  if (!uri.startsWith(range.prefix)) return false;
  if (range.exact === true) return uri.length === range.prefix.length;
  return range.depth === undefined || slashesIn(uri, range.prefix.length) <= range.depth;
}

/** The number of `/` in `text` from `from` on. */
export function slashesIn(text: string, from = 0): number {
  let count = 0;
  for (let i = text.indexOf('/', from); i !== -1; i = text.indexOf('/', i + 1)) count += 1;
  return count;
}

/**
 * Ranges in the one form listings rely on (see `normalizePrefixes`): sorted by
 * prefix with `compare`, none whose prefix starts with another's. A range
 * whose prefix a kept one covers is merged into it, which then admits both:
 * its depth grows to reach the covered range's deepest URI (the `/` between
 * the two prefixes plus the covered depth), and it stays exact only when both
 * are the same exact URI.
 */
export function normalizeRanges(
  ranges: Iterable<ListingRange>,
  compare: (a: string, b: string) => number = compareCodeUnits,
): ListingRange[] {
  const sorted = [...ranges].sort((a, b) => compare(a.prefix, b.prefix));
  const kept: ListingRange[] = [];
  for (const range of sorted) {
    const last = kept.at(-1);
    if (last === undefined || !range.prefix.startsWith(last.prefix)) {
      kept.push(range);
      continue;
    }
    kept[kept.length - 1] = mergeRanges(last, range);
  }
  return kept;
}

/** `outer` widened to admit `inner` too (`inner.prefix` starts with `outer.prefix`). */
function mergeRanges(outer: ListingRange, inner: ListingRange): ListingRange {
  const merged = widened(outer, inner);
  // Admitting what `outer` did is still all granted when `outer` was complete;
  // a range widened to admit more is not known to be.
  const same = merged.depth === outer.depth && merged.exact === outer.exact;
  return same && outer.complete === true ? { ...merged, complete: true } : merged;
}

function widened(outer: ListingRange, inner: ListingRange): ListingRange {
  if (outer.exact === true && inner.exact === true && outer.prefix === inner.prefix)
    return { prefix: outer.prefix, exact: true };
  const between = slashesIn(inner.prefix, outer.prefix.length);
  const innerDepth = inner.exact === true ? 0 : inner.depth;
  const outerDepth = outer.exact === true ? 0 : outer.depth;
  if (innerDepth === undefined || outerDepth === undefined) return { prefix: outer.prefix };
  return { prefix: outer.prefix, depth: Math.max(outerDepth, between + innerDepth) };
}

/**
 * A set of prefixes in the one form listings rely on: no duplicates, none
 * that starts with another (a longer prefix adds nothing a shorter one does
 * not already cover), sorted by `compare` (UTF-16 code units by default).
 * Prefixes left are then pairwise disjoint as ranges of strings: everything
 * starting with one sorts entirely before or entirely after everything
 * starting with another, so a listing can walk them one after the other and
 * still come out in one global order.
 */
export function normalizePrefixes(
  prefixes: Iterable<string>,
  compare: (a: string, b: string) => number = compareCodeUnits,
): string[] {
  const sorted = [...new Set(prefixes)].sort(compare);
  const kept: string[] = [];
  for (const prefix of sorted) {
    // Sorted, a prefix comes right before the strings it covers (in code-unit
    // and in byte order alike), so only the last kept one can cover it.
    const last = kept.at(-1);
    if (last !== undefined && prefix.startsWith(last)) continue;
    kept.push(prefix);
  }
  return kept;
}

/** Order by UTF-16 code units (JavaScript's default string order). */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The longest prefix of percent-encoded `text` that decodes as UTF-8,
 * decoded: a URI prefix taken from a grant may stop inside an encoded
 * character (`caf%C3` of `caf%C3%A9`), and what it narrows to is then the
 * whole characters before it. For a prefix of a canonical encoding (each
 * character's encoding in turn) the result is a prefix of what it encodes.
 */
export function decodePercentPrefix(text: string): string {
  let rest = text;
  for (;;) {
    try {
      return decodeURIComponent(rest);
    } catch {
      // Malformed or cut-off triplets: drop back to before the last `%`.
      rest = rest.slice(0, Math.max(0, rest.lastIndexOf('%')));
    }
  }
}

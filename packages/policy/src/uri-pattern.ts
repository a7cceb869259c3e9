/**
 * A grant's URI pattern, compiled once when the tenant's grants are loaded.
 * `*` matches any characters but `/` (within one path segment), `**` (or any
 * longer run of stars) matches any characters at all (across segments), and
 * everything else is literal, so `file:///docs/public/**` is a prefix and
 * `db+postgres:///sales/public/*` one level.
 */
export interface UriPattern {
  /** The pattern as written in the grant. */
  readonly source: string;
  /** Whether the whole URI matches; linear in the URI's length (see {@link compileUriPattern}). */
  matches(uri: string): boolean;
  /** Whether some URI that starts with `prefix` matches (to refuse grants that never can). */
  matchesSomeUriStartingWith(prefix: string): boolean;
}

const SLASH = 0x2f;

/**
 * Compiles a pattern to a bit-parallel automaton (Shift-And extended with
 * gaps, as in Navarro and Raffinot, "Flexible Pattern Matching in Strings",
 * section 4.3). No regular expression is involved: a backtracking engine
 * given `.*` for each `**` takes time polynomial of high degree in the URI's
 * length on a URI that fails late (a review found one grant with three `**`
 * and one 8 KiB URI blocking the event loop for 16 s).
 *
 * State 0 is the start and state i is "the first i literal characters of the
 * pattern matched"; every state is one bit. A `*` or `**` after literal i is
 * a self-loop on state i (for any character but `/`, or for any character).
 * Each URI character then updates every state at once in a handful of word
 * operations, so a match costs at most (URI length) x ceil((literals + 1) / 32)
 * steps whatever the pattern or URI, and it stops as soon as no state is left.
 */
export function compileUriPattern(pattern: string): UriPattern {
  const literals: number[] = [];
  /** Per state: what the wildcard after it (if any) may consume. */
  const gaps: Array<'none' | 'segment' | 'any'> = ['none'];
  for (let i = 0; i < pattern.length;) {
    if (pattern[i] === '*') {
      let end = i;
      while (pattern[end] === '*') end += 1;
      // `**`, `***`, ...: any characters (`.*[^/]*` is `.*`).
      gaps[literals.length] = end - i >= 2 ? 'any' : 'segment';
      i = end;
    } else {
      literals.push(pattern.charCodeAt(i));
      gaps.push('none');
      i += 1;
    }
  }
  const states = literals.length + 1;
  const words = Math.ceil(states / 32);
  const mask = () => new Uint32Array(words);
  const setBit = (bits: Uint32Array, state: number) => {
    bits[state >>> 5]! |= 1 << (state & 31);
  };

  /** Per character: the states entered by reading it (literal i is state i); a table for ASCII. */
  const entered = new Map<number, Uint32Array>();
  literals.forEach((code, index) => {
    let bits = entered.get(code);
    if (bits === undefined) entered.set(code, (bits = mask()));
    setBit(bits, index + 1);
  });
  const none = mask();
  const ascii = Array.from({ length: 128 }, (_, code) => entered.get(code) ?? none);
  /** States that stay on any character but `/`, and those that stay on `/` too. */
  const staysOnOther = mask();
  const staysOnSlash = mask();
  gaps.forEach((gap, state) => {
    if (gap !== 'none') setBit(staysOnOther, state);
    if (gap === 'any') setBit(staysOnSlash, state);
  });
  const acceptWord = (states - 1) >>> 5;
  const acceptBit = (states - 1) & 31;
  // Reused across calls: matching is synchronous, so no two calls overlap.
  let current = mask();
  let next = mask();

  /** Reads `text` from the start state; false as soon as no state is left. */
  const run = (text: string): boolean => {
    current.fill(0);
    current[0] = 1;
    for (let k = 0; k < text.length; k += 1) {
      const code = text.charCodeAt(k);
      const enter = code < 128 ? ascii[code]! : (entered.get(code) ?? none);
      const stay = code === SLASH ? staysOnSlash : staysOnOther;
      let carry = 0;
      let alive = 0;
      for (let w = 0; w < words; w += 1) {
        const bits = current[w]!;
        const value = ((((bits << 1) | carry) & enter[w]!) | (bits & stay[w]!)) >>> 0;
        carry = bits >>> 31;
        next[w] = value;
        alive |= value;
      }
      const previous = current;
      current = next;
      next = previous;
      if (alive === 0) return false;
    }
    return true;
  };

  return {
    source: pattern,
    matches: (uri) => run(uri) && ((current[acceptWord]! >>> acceptBit) & 1) === 1,
    // Every live state can still reach acceptance by appending the rest of the
    // pattern's literals, so a live state after the prefix means some match.
    matchesSomeUriStartingWith: (prefix) => run(prefix),
  };
}

/**
 * URIs a pattern must never be matched against, because a source might
 * normalise them into a different resource than the text suggests: dot
 * segments (plain or percent-encoded), encoded separators, backslashes and
 * control characters. Sources refuse these too; the policy does not rely on it.
 */
// eslint-disable-next-line no-control-regex -- control characters are exactly what this rejects
const AMBIGUOUS = /(^|\/)\.{1,2}(\/|$|[?#])|%2e|%2f|%5c|\\|[\x00-\x1f\x7f]/i;

export function isAmbiguousUri(uri: string): boolean {
  return AMBIGUOUS.test(uri);
}

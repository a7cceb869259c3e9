/**
 * One shared copy of equal immutable values that many callers carry: the
 * scopes list `["mcp:read"]` or the client id of every token of one client,
 * the grant names of one role. Each distinct principal otherwise keeps its own
 * copy of each for as long as its token is cached, and a gateway holds tens of
 * thousands of principals at once.
 *
 * Only values that are equal by content and frozen (or primitive) are shared,
 * so no caller can tell a shared copy from its own, and nothing bound to a
 * caller (a fingerprint, a subject) is ever interned. Bounded: past
 * `maxEntries` distinct values it starts over, which costs nothing but the
 * copies it would have saved.
 */
export class InternedValues<V> {
  readonly #values = new Map<string, V>();
  readonly #maxEntries: number;

  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

  /** The copy kept under `key` (a text that determines the value entirely), else `make()`'s, kept from now on. */
  get(key: string, make: () => V): V {
    let value = this.#values.get(key);
    if (value === undefined) {
      value = make();
      if (this.#values.size >= this.#maxEntries) this.#values.clear();
      this.#values.set(key, value);
    }
    return value;
  }

  get size(): number {
    return this.#values.size;
  }
}

/** The shared copy of a frozen list of strings equal to `list` (JSON keys it: no two lists share one). */
export function internStringList(
  interned: InternedValues<readonly string[]>,
  list: readonly string[],
): readonly string[] {
  if (list.length === 0) return EMPTY_LIST;
  return interned.get(JSON.stringify(list), () => Object.freeze([...list]));
}

const EMPTY_LIST: readonly string[] = Object.freeze([]);

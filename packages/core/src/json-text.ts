/** JSON texts of values that can no longer change, by value (see `frozenWithJson`). */
const texts = new WeakMap<object, string>();

/**
 * A deeply frozen copy of `value` whose JSON text is remembered, so whoever
 * serializes it again (every listing page a static source serves) takes the
 * text instead of running `JSON.stringify` over the same object per request.
 * The copy is what the text parses to (a JSON round trip), so the two can
 * never disagree, and frozen, so neither can drift: in strict-mode code a
 * write to it throws instead of going unnoticed.
 */
export function frozenWithJson<T extends object>(value: T): T {
  const text = JSON.stringify(value);
  const copy = deepFreeze(JSON.parse(text) as T);
  texts.set(copy, text);
  return copy;
}

/** The JSON text of a value made by `frozenWithJson`; undefined for any other value. */
export function knownJsonText(value: object): string | undefined {
  return texts.get(value);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

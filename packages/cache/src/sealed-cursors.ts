/** Longest a sealed cursor is handed out again (it stays valid far longer: the codec's max age). */
const REUSE_MS = 60_000;
const MAX_ENTRIES = 10_000;

/**
 * Cursors sealed for one caller, remembered for a short while so a caller
 * listing the same page again gets the cursor it got before instead of a
 * fresh AES-GCM sealing per hit (issue 13). Keyed by the caller's
 * fingerprint, so a cursor is only ever handed to the caller it is bound
 * to; one instance per tenant. A bounded LRU (a Map's first key is the
 * least recently used).
 */
export class SealedCursors {
  readonly #entries = new Map<string, { cursor: string; until: number }>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /**
   * The cursor sealed for (`fingerprint`, `listing`, `position`), reused for
   * at most `freshMs` (the freshness left on the page it continues) and one minute.
   */
  seal(fingerprint: string, listing: string, position: unknown, freshMs: number, make: () => string): string {
    const key = `${fingerprint}\u0000${listing}\u0000${JSON.stringify(position)}`;
    const now = this.#now();
    const known = this.#entries.get(key);
    if (known !== undefined) {
      this.#entries.delete(key);
      if (known.until > now) {
        this.#entries.set(key, known);
        return known.cursor;
      }
    }
    const cursor = make();
    const reuse = Math.min(freshMs, REUSE_MS);
    if (reuse > 0) {
      this.#entries.set(key, { cursor, until: now + reuse });
      if (this.#entries.size > MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
    }
    return cursor;
  }
}

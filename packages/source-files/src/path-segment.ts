/**
 * Which file and folder names this source serves. One predicate decides both
 * what the walk lists and what a read accepts, so a listed resource is always
 * readable and nothing unlisted by name is.
 *
 * Refused: hidden names (a leading dot, which also covers `.` and `..`, since
 * dot-files such as `.env` or `.git` are not meant to be published); names
 * with a backslash (a path separator elsewhere, a traversal vector in a URI);
 * control characters including NUL; and U+FFFD, which stands for bytes that
 * were not valid UTF-8, so the name could not round-trip through a URI.
 */
export function isServableName(name: string): boolean {
  if (name.length === 0 || name.startsWith('.')) return false;
  for (let i = 0; i < name.length; i += 1) {
    const code = name.charCodeAt(i);
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f)) return false;
    if (code === 0x2f /* / */ || code === 0x5c /* \ */ || code === 0xfffd) return false;
  }
  return true;
}

/** Orders names by UTF-16 code units: locale-independent, so every replica agrees. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Orders relative paths (as segment arrays) the way the walk emits them: a
 * depth-first pre-order with siblings by `compareNames`, so a folder comes
 * right before its contents (`a`, `a/x`, `a-b`), unlike a plain string sort
 * of the joined paths (which puts `a-b` before `a/x`).
 */
export function comparePaths(a: readonly string[], b: readonly string[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i += 1) {
    const order = compareNames(a[i] ?? '', b[i] ?? '');
    if (order !== 0) return order;
  }
  return a.length - b.length;
}

/** A JSON Pointer (RFC 6901 section 3) from a path of keys and indexes: `~` and `/` escaped as `~0` and `~1`. */
export function jsonPointer(path: readonly PropertyKey[]): string {
  return path.map((key) => `/${String(key).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

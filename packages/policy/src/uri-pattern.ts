/**
 * Compiles a grant's URI pattern to an anchored regular expression: `**`
 * matches any characters, `*` any characters but `/`, the rest is literal.
 */
export function compileUriPattern(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i += 1) {
    const char = pattern[i]!;
    if (char === '*') {
      if (pattern[i + 1] === '*') {
        source += '.*';
        i += 1;
      } else {
        source += '[^/]*';
      }
    } else {
      source += char.replace(/[\\^$.|?+()[\]{}]/g, '\\$&');
    }
  }
  return new RegExp(`^${source}$`, 's');
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

/**
 * RFC 6570 URI templates, level 1 (simple string expansion `{var}`), parsed
 * once at startup and matched against concrete URIs on every read.
 *
 * Matching is the reverse of expansion: RFC 6570 section 3.2.2 percent-encodes
 * every character outside `unreserved` when expanding `{var}`, so an expanded
 * value never contains the URI delimiters `/`, `?` or `#`; a captured value is
 * one or more characters other than those, percent-decoded.
 */

/** A literal run of the template, or one `{var}` expression. */
export type UriTemplatePart = { kind: 'literal'; text: string } | { kind: 'variable'; name: string };

export interface ParsedUriTemplate {
  readonly source: string;
  readonly parts: readonly UriTemplatePart[];
  readonly variables: readonly string[];
}

/** RFC 6570 section 2.3 `varname`: varchars, optionally joined by single dots. */
const VARNAME = /^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+(?:\.(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+)*$/;
const OPERATORS = new Set(['+', '#', '.', '/', ';', '?', '&', '=', ',', '!', '@', '|']);
const DELIMITERS = /[/?#]/;

/**
 * Parses `template`, or returns a message saying why it is not supported.
 * Only simple `{var}` expressions are accepted; two expressions must be
 * separated by literal text (otherwise where one value ends is ambiguous),
 * and a variable may appear only once.
 */
export function parseUriTemplate(template: string): ParsedUriTemplate | { error: string } {
  const parts: UriTemplatePart[] = [];
  const variables: string[] = [];
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    const close = template.indexOf('}', i);
    if (close !== -1 && (open === -1 || close < open)) {
      return { error: `unmatched "}" at offset ${close}` };
    }
    if (open === -1) {
      parts.push({ kind: 'literal', text: template.slice(i) });
      break;
    }
    if (open > i) parts.push({ kind: 'literal', text: template.slice(i, open) });
    const end = template.indexOf('}', open + 1);
    if (end === -1) return { error: `unmatched "{" at offset ${open}` };
    const name = template.slice(open + 1, end);
    if (name.length > 0 && OPERATORS.has(name[0] ?? '')) {
      return { error: `expression "{${name}}" uses an operator; only simple {var} expressions are supported` };
    }
    if (!VARNAME.test(name)) {
      return { error: `expression "{${name}}" is not a simple {var} expression (no lists, modifiers or operators)` };
    }
    if (variables.includes(name)) return { error: `variable "${name}" appears more than once` };
    if (parts.at(-1)?.kind === 'variable') {
      return { error: `expression "{${name}}" directly follows another; separate them with literal text` };
    }
    parts.push({ kind: 'variable', name });
    variables.push(name);
    i = end + 1;
  }
  return { source: template, parts, variables };
}

/**
 * Matches `uri` against `template` and returns the percent-decoded variable
 * values, or `undefined` when it does not match or a value is not acceptable
 * (a decode failure, a control character or NUL).
 *
 * Runs in time linear in the URI (times the number of literals), never by
 * regex backtracking: the last literal is anchored at the end, and every other
 * variable ends at the first following occurrence of the next literal. That
 * earliest choice never loses a match: a later occurrence would put the
 * earlier one inside the value, which only shortens what the next variable may
 * take, and a literal holding a delimiter cannot be skipped over at all.
 */
export function matchUriTemplate(template: ParsedUriTemplate, uri: string): Record<string, string> | undefined {
  const { parts } = template;
  const first = parts[0];
  const last = parts.at(-1);
  let start = 0;
  let end = uri.length;
  let from = 0;
  let to = parts.length;
  if (first?.kind === 'literal') {
    if (!uri.startsWith(first.text)) return undefined;
    start = first.text.length;
    from = 1;
  }
  if (to > from && last?.kind === 'literal') {
    if (uri.length - last.text.length < start || !uri.endsWith(last.text)) return undefined;
    end = uri.length - last.text.length;
    to -= 1;
  }
  if (from === to) return start === end ? {} : undefined;

  const raw: Array<[string, string]> = [];
  let pos = start;
  for (let p = from; p < to; p += 1) {
    const part = parts[p];
    if (part?.kind !== 'variable') return undefined; // literals are consumed below
    const next = parts[p + 1];
    let valueEnd: number;
    if (p + 1 < to && next?.kind === 'literal') {
      valueEnd = uri.indexOf(next.text, pos + 1);
      if (valueEnd === -1 || valueEnd + next.text.length > end) return undefined;
    } else {
      valueEnd = end;
    }
    if (valueEnd <= pos) return undefined;
    const value = uri.slice(pos, valueEnd);
    if (DELIMITERS.test(value)) return undefined;
    raw.push([part.name, value]);
    pos = valueEnd + (p + 1 < to && next?.kind === 'literal' ? next.text.length : 0);
    if (p + 1 < to) p += 1; // skip the literal just consumed
  }
  if (pos !== end) return undefined;

  const values: Record<string, string> = {};
  for (const [name, value] of raw) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(value);
    } catch {
      return undefined;
    }
    if (hasControlCharacter(decoded)) return undefined;
    values[name] = decoded;
  }
  return values;
}

/** C0 controls (NUL included), DEL and C1 controls: never legitimate in a template value. */
function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i += 1) {
    const code = value.charCodeAt(i);
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

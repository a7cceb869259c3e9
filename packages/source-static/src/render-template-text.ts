/**
 * Renders the `text` of a static template for one read: every `{{var}}`
 * placeholder (mustache-style, optional inner spaces) becomes the value the
 * URI gave that variable. Mustache braces, not RFC 6570 ones, because the
 * text is often JSON, which is full of single braces.
 */

/** `{{ name }}`; names as in RFC 6570 `varname`. */
export const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_%.]+)\s*\}\}/g;

/**
 * Whether `mimeType` is JSON (`application/json` or a `+json` suffix type,
 * RFC 6839 section 3.1), parsing the media type rather than matching substrings.
 */
export function isJsonMediaType(mimeType: string | undefined): boolean {
  if (mimeType === undefined) return false;
  const essence = (mimeType.split(';')[0] ?? '').trim().toLowerCase();
  return essence === 'application/json' || /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+\+json$/.test(essence);
}

/** The placeholder names `text` uses, in order of first appearance. */
export function placeholderNames(text: string): string[] {
  return [...new Set(Array.from(text.matchAll(PLACEHOLDER), (m) => m[1] ?? ''))];
}

/**
 * Substitutes `values` into `text`. For JSON media types each value is
 * JSON-string-escaped (the placeholder is expected inside a JSON string), so a
 * value such as `","admin":true,"x":"` stays data and can never add keys or
 * break the document; other types take the value verbatim.
 */
export function renderTemplateText(text: string, values: Readonly<Record<string, string>>, mimeType?: string): string {
  const json = isJsonMediaType(mimeType);
  // A replacer function, not a replacement string: `$&` and friends in a value
  // must stay literal.
  return text.replace(PLACEHOLDER, (placeholder, name: string) => {
    const value = values[name];
    if (value === undefined) return placeholder;
    return json ? JSON.stringify(value).slice(1, -1) : value;
  });
}

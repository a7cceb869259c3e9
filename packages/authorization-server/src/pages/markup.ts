/**
 * HTML built so that no dynamic value can become markup: the `markup` tag
 * escapes every interpolated value unless it is itself the result of `markup`,
 * so a client's self-asserted `client_name` such as
 * `<script>` is shown as text. Values go into element content and quoted
 * attribute values only; the escaping below is safe in both (HTML Living
 * Standard, "Serializing HTML fragments", escapes the same five characters).
 *
 * The tag is not called `html`: Prettier reformats templates of a tag by that
 * name as HTML, which would change the bytes served (and break the style
 * sheet's CSP hash).
 */

const MARKUP = Symbol('html markup');

/** A fragment of markup made by `markup`: the only thing interpolated unescaped. */
export interface Markup {
  readonly [MARKUP]: string;
}

/** What may be interpolated: text (escaped), markup, or a list of either; `undefined` and `false` render nothing. */
export type MarkupValue = string | number | Markup | readonly MarkupValue[] | undefined | false;

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** The text with `& < > " '` escaped, for element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ENTITIES[character] ?? character);
}

function render(value: MarkupValue): string {
  if (value === undefined || value === false) return '';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return escapeHtml(value);
  if (Array.isArray(value)) return value.map(render).join('');
  return (value as Markup)[MARKUP];
}

/** Tagged template: the literal parts are markup, every `${value}` is escaped text unless it is `Markup`. */
export function markup(strings: TemplateStringsArray, ...values: MarkupValue[]): Markup {
  let out = strings[0] ?? '';
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] ?? '');
  });
  return { [MARKUP]: out };
}

/** The serialized document, for the response body. */
export function markupText(fragment: Markup): string {
  return fragment[MARKUP];
}

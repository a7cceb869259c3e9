/**
 * HTML built so that no dynamic value can become markup: the `html` tag
 * escapes every interpolated value unless it is itself the result of `html`,
 * so a client's self-asserted `client_name` such as
 * `<script>` is shown as text. Values go into element content and quoted
 * attribute values only; the escaping below is safe in both (HTML Living
 * Standard, "Serializing HTML fragments", escapes the same five characters).
 */

const MARKUP = Symbol('html markup');

/** A fragment of markup made by `html`: the only thing interpolated unescaped. */
export interface Html {
  readonly [MARKUP]: string;
}

/** What may be interpolated: text (escaped), markup, or a list of either; `undefined` and `false` render nothing. */
export type HtmlValue = string | number | Html | readonly HtmlValue[] | undefined | false;

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** The text with `& < > " '` escaped, for element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ENTITIES[character] ?? character);
}

function render(value: HtmlValue): string {
  if (value === undefined || value === false) return '';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return escapeHtml(value);
  if (Array.isArray(value)) return value.map(render).join('');
  return (value as Html)[MARKUP];
}

/** Tagged template: the literal parts are markup, every `${value}` is escaped text unless it is `Html`. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] ?? '');
  });
  return { [MARKUP]: out };
}

/** The serialized document, for the response body. */
export function htmlText(fragment: Html): string {
  return fragment[MARKUP];
}

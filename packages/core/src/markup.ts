/**
 * The one way the gateway's server-rendered pages (the authorization
 * server's sign-in and consent pages, the admin console) make HTML: a tagged
 * template whose every interpolated value is escaped unless it is itself
 * `Markup` (the result of another `markup` template). So a client's
 * self-asserted `client_name`, a tenant's configuration, a token's claims or
 * a problem's detail is always shown as text and never leaves a quoted
 * attribute value.
 *
 * Values go into element content and quoted attribute values only; escaping
 * `& < > " '` is safe in both (HTML Living Standard, 13.1.2.3 "Attributes"
 * and 13.3 "Serializing HTML fragments" escape the same characters).
 *
 * The tag is not called `html`: Prettier reformats templates of a tag by that
 * name as HTML, which changes the bytes served (and so the hash a
 * Content-Security-Policy pins a style sheet by).
 */

const MARKUP = Symbol('markup');

/** A fragment of markup made by `markup` or `trustedMarkup`: the only thing interpolated unescaped. */
export interface Markup {
  readonly [MARKUP]: string;
}

/**
 * What may be interpolated: text and numbers (escaped), markup, or a list of
 * them (joined); `undefined`, `null` and `false` render nothing, so
 * `${condition && markup`...`}` works.
 */
export type MarkupValue = Markup | string | number | null | undefined | false | readonly MarkupValue[];

const ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** The text with `& < > " '` escaped, for element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ENTITIES[character] ?? character);
}

/** Whether a value is markup made here (not a look-alike object from elsewhere). */
export function isMarkup(value: unknown): value is Markup {
  return typeof value === 'object' && value !== null && MARKUP in value;
}

function render(value: MarkupValue): string {
  if (value === undefined || value === null || value === false) return '';
  if (typeof value === 'string') return escapeHtml(value);
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return (value as readonly MarkupValue[]).map(render).join('');
  if (isMarkup(value)) return value[MARKUP];
  // A value outside the type (an object from untyped code) is shown as text, never trusted.
  return escapeHtml(String(value));
}

/** Tagged template: the literal parts are markup, every `${value}` is escaped text unless it is `Markup`. */
export function markup(strings: TemplateStringsArray, ...values: readonly MarkupValue[]): Markup {
  let out = strings[0] ?? '';
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] ?? '');
  });
  return { [MARKUP]: out };
}

/**
 * A constant of the caller's own source (a style sheet, an SVG path built
 * from numbers) as markup, unescaped. Never for anything a request, a token or
 * a tenant supplied.
 */
export function trustedMarkup(text: string): Markup {
  return { [MARKUP]: text };
}

/** The serialized fragment, for a response body. */
export function markupText(fragment: Markup): string {
  return fragment[MARKUP];
}

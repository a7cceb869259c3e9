/**
 * The console's one way to make HTML: a tagged template whose every
 * interpolated value is escaped unless it is already `Html` (the result of
 * another `html` template). Nothing else in the console writes markup, so a
 * value from a tenant's configuration, a token's claims or a problem's detail
 * can never become markup or leave an attribute.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** What a template may interpolate: arrays are joined, `undefined`, `null` and `false` vanish. */
export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text as HTML text or a quoted attribute value (HTML Living Standard, 13.1.2.3 and 13.1.4). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function render(value: HtmlValue): string {
  if (value === undefined || value === null || value === false) return '';
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): Html {
  let text = strings[0] ?? '';
  values.forEach((value, index) => {
    text += render(value) + (strings[index + 1] ?? '');
  });
  return new Html(text);
}

/** A constant of this module's own (the stylesheet), never anything a request or a tenant supplied. */
export function constantHtml(text: string): Html {
  return new Html(text);
}

// The pages' escaping template is the gateway's one, shared with the admin console (core's markup.ts).
export { escapeHtml, markup, markupText, trustedMarkup } from '@mcpgw/core';
export type { Markup, MarkupValue } from '@mcpgw/core';

import type { Configuration } from 'oidc-provider';
import { displayText } from '../pages/display-text.js';
import { errorPage } from '../pages/error-page.js';
import { markupText } from '../pages/markup.js';
import { PAGE_HEADERS } from '../pages/send-page.js';

/**
 * oidc-provider's `renderError`: the page a browser sees when the provider
 * cannot answer the client itself, as when the authorization request names
 * an unknown client or a redirect URI it did not register (RFC 6749 section
 * 4.1.2.1 forbids redirecting then), or the resume of an interaction fails.
 * The same page as every other one: escaped, inline style, no script.
 */
export function providerErrorPage(tenantName: string): NonNullable<Configuration['renderError']> {
  return (ctx, out) => {
    for (const [name, value] of Object.entries(PAGE_HEADERS)) ctx.set(name, value);
    ctx.body = markupText(
      errorPage({
        tenantName,
        title: 'This sign-in request cannot go on',
        message:
          'The application that sent you here made a request this server cannot accept, or the sign-in expired. Go back to the application and try again; if it keeps happening, tell its publisher.',
        error: out.error,
        description: out.error_description === undefined ? undefined : displayText(out.error_description, 300),
      }),
    );
  };
}

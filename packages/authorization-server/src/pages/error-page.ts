import type { Markup } from './markup.js';
import { markup } from './markup.js';
import { pageLayout } from './page-layout.js';

export interface ErrorPageModel {
  tenantName: string;
  /** What happened, for a person: the page's heading. */
  title: string;
  /** What to do now, in a sentence or two. */
  message: string;
  /** The OAuth error code (RFC 6749 section 4.1.2.1, e.g. `access_denied`), for whoever helps the user. */
  error: string;
  /** The error's description, when one was given (it may come from the upstream: shown as text). */
  description?: string | undefined;
  /** A way back to the application, when the answer for it is already decided (it will receive `error`). */
  returnTo?: { href: string; label: string } | undefined;
}

/**
 * The page a browser lands on when a sign-in cannot go on: an expired or
 * foreign interaction, a refused form, the upstream identity provider
 * refusing the sign-in, or a client's bad authorization request that
 * cannot be sent back to it (RFC 6749 section 4.1.2.1: an invalid redirect
 * URI must not be redirected to).
 */
export function errorPage(model: ErrorPageModel): Markup {
  return pageLayout({
    title: model.title,
    tenantName: model.tenantName,
    body: markup`<p>${model.message}</p>
<dl>
<dt>Error</dt><dd><code class="error-code">${model.error}</code></dd>
${model.description === undefined || model.description === '' ? '' : markup`<dt>Details</dt><dd>${model.description}</dd>`}
</dl>
${model.returnTo === undefined ? '' : markup`<p class="actions"><a class="button primary" href="${model.returnTo.href}">${model.returnTo.label}</a></p>`}`,
  });
}

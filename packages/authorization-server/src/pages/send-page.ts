import type { ServerResponse } from 'node:http';
import type { Markup } from './markup.js';
import { markupText } from './markup.js';
import { PAGE_STYLES_HASH } from './page-styles.js';

/**
 * The headers of every page: never cached (it carries a CSRF token and names
 * a user's pending authorization), never framed (a consent page in a hostile
 * frame invites clickjacking; RFC 6819 section 4.4.1.9), no script at all and
 * only our own style sheet (CSP Level 3), no referrer leaking the
 * interaction URL to another origin. `same-origin`, not `no-referrer`: under
 * `no-referrer` a browser sends `Origin: null` with the page's own form
 * (Fetch, "serializing a request origin"), which the gateway's Origin check
 * (DNS-rebinding protection) must refuse.
 *
 * No `form-action`: a form's redirects are checked against it too, and the
 * Allow and Deny answers end at the client's redirect URI on another origin.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'Content-Security-Policy': `default-src 'none'; style-src ${PAGE_STYLES_HASH}; frame-ancestors 'none'; base-uri 'none'`,
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
};

/** Writes a whole page as the response. */
export function sendPage(res: ServerResponse, status: number, page: Markup): void {
  const body = markupText(page);
  res.statusCode = status;
  for (const [name, value] of Object.entries(PAGE_HEADERS)) res.setHeader(name, value);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

import type { Markup, MarkupValue } from './markup.js';
import { markup } from './markup.js';
import { PAGE_STYLES } from './page-styles.js';

export interface PageLayout {
  /** The document title, also the page's one `h1`: says what the page is for (WCAG 2.2, 2.4.2). */
  title: string;
  /** Who runs this sign-in: the tenant's display name, in the banner on every page. */
  tenantName: string;
  body: MarkupValue;
}

/**
 * The document every page shares: language, viewport, the inline style sheet,
 * a banner naming the tenant and one `main` landmark holding the page's `h1`
 * (WCAG 2.2 1.3.1 and 2.4.1: landmarks and headings to navigate by). No script:
 * every page works with JavaScript off.
 */
export function pageLayout(layout: PageLayout): Markup {
  return markup`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${layout.title} · ${layout.tenantName}</title>
<style>${PAGE_STYLES}</style>
</head>
<body>
<header><p>${layout.tenantName}</p></header>
<main>
<h1>${layout.title}</h1>
${layout.body}
</main>
</body>
</html>
`;
}

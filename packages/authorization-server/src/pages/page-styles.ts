import { createHash } from 'node:crypto';
import { markup, markupText } from './markup.js';

/**
 * The one style sheet of the authorization server's pages, inline (no asset
 * to serve, nothing from a third party). Colours meet WCAG 2.2 AA contrast
 * (1.4.3: 4.5:1 for text, 1.4.11: 3:1 for controls and the focus ring): the
 * body text #1f2328 and the primary button #1d4ed8 on white are both above
 * 6:1. Keyboard focus is always visible (2.4.7) as a thick outline; a layout
 * of one column that reflows at 320 CSS pixels (1.4.10) serves a phone and a
 * laptop alike; long unbroken words (a client id, a hostile client name)
 * wrap instead of widening the page.
 *
 * A literal `markup` template with no interpolation: markup of our own, which
 * the `<style>` element takes as it is.
 */
export const PAGE_STYLES = markup`
:root { color-scheme: light; --ink: #1f2328; --muted: #4b5563; --line: #d0d7de; --accent: #1d4ed8; --accent-dark: #1e3a8a; --danger: #b42318; --surface: #f6f8fa; }
* { box-sizing: border-box; }
html { font-size: 100%; -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
body { margin: 0; background: var(--surface); color: var(--ink); font: 1rem/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
header { padding: 0.75rem 1rem; border-bottom: 1px solid var(--line); background: #fff; }
header p { margin: 0; max-width: 36rem; margin-inline: auto; font-weight: 600; overflow-wrap: anywhere; }
main { display: block; max-width: 36rem; margin: 1.5rem auto; padding: 1.5rem; background: #fff; border: 1px solid var(--line); border-radius: 0.5rem; }
@media (max-width: 40rem) { main { margin: 0; border: 0; border-radius: 0; padding: 1.25rem 1rem; } }
h1 { font-size: 1.5rem; line-height: 1.25; margin: 0 0 1rem; overflow-wrap: anywhere; }
h2 { font-size: 1.0625rem; margin: 1.5rem 0 0.5rem; }
p, li, dd { overflow-wrap: anywhere; }
dl { margin: 0; display: grid; grid-template-columns: minmax(0, 1fr); gap: 0.25rem; }
dt { font-weight: 600; margin-top: 0.5rem; }
dd { margin: 0; }
code { font: 0.9375rem/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: var(--surface); padding: 0 0.25rem; border-radius: 0.25rem; overflow-wrap: anywhere; }
ul.scopes { padding-left: 1.25rem; margin: 0.25rem 0 0; }
ul.scopes li { margin: 0.25rem 0; }
.muted { color: var(--muted); }
.note { color: var(--muted); font-size: 0.9375rem; }
.error-code { color: var(--danger); font-weight: 600; }
form { margin: 1.5rem 0 0; }
.actions { display: flex; flex-wrap: wrap; gap: 0.75rem; }
button, .button { display: inline-block; min-height: 2.75rem; min-width: 8rem; padding: 0.625rem 1.25rem; font: inherit; font-weight: 600; text-align: center; text-decoration: none; border-radius: 0.375rem; border: 2px solid var(--accent); cursor: pointer; }
@media (max-width: 40rem) { .actions > * { flex: 1 1 100%; } }
.primary { background: var(--accent); color: #fff; }
.primary:hover { background: var(--accent-dark); border-color: var(--accent-dark); }
.secondary { background: #fff; color: var(--ink); border-color: #57606a; }
.secondary:hover { background: var(--surface); }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent-dark); outline-offset: 3px; }
button:focus-visible, .button:focus-visible { box-shadow: 0 0 0 2px #fff; }
`;

/** The Content-Security-Policy source that allows exactly this style sheet and no other (CSP Level 3, section 8.4). */
export const PAGE_STYLES_HASH = `'sha256-${createHash('sha256').update(markupText(PAGE_STYLES)).digest('base64')}'`;

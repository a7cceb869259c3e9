import { trustedMarkup } from '@mcpgw/core';

/**
 * The console's whole stylesheet, inline (no request to anywhere, works under
 * a strict Content-Security-Policy with a hash-free `style-src 'unsafe-inline'`
 * only for this block). Colours keep WCAG 2.2 AA contrast (4.5:1 for text);
 * focus is always visible; the layout is one column on a phone.
 */
export const consoleStyles = trustedMarkup(`<style>
:root{--ink:#1b1b1f;--muted:#4a4a55;--line:#c4c4cc;--bg:#fff;--panel:#f4f4f7;--accent:#0b4fb3;--bad:#a4001c;--good:#0b6b2c;--warn:#7a4b00}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--ink);background:var(--bg)}
a{color:var(--accent)}a:hover{text-decoration-thickness:2px}
:focus-visible{outline:3px solid #1a73e8;outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:#fff;padding:.5rem;z-index:2}
header.top{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:center;padding:.75rem 1rem;border-bottom:1px solid var(--line);background:var(--panel)}
header.top .brand{font-weight:700;color:var(--ink);text-decoration:none}
header.top .who{margin-left:auto;color:var(--muted);font-size:.9rem}
nav.tabs ul{display:flex;flex-wrap:wrap;gap:.25rem 1rem;list-style:none;margin:0;padding:0}
nav.tabs a[aria-current=page]{font-weight:700;text-decoration:none;border-bottom:3px solid var(--accent)}
main{max-width:70rem;margin:0 auto;padding:1rem}
h1{font-size:1.6rem;margin:.5rem 0 1rem}h2{font-size:1.25rem;margin:1.5rem 0 .5rem}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1rem}
th,td{border-bottom:1px solid var(--line);padding:.4rem .5rem;text-align:left;vertical-align:top}
th{background:var(--panel)}
.scroll{overflow-x:auto}
ul.plain{list-style:none;margin:0;padding:0}ul.plain li+li{margin-top:.25rem}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));gap:1rem}.chart{margin:0}.chart svg{display:block;margin-top:.25rem}.chart figcaption .hint{display:block}
code,pre,textarea.code{font-family:ui-monospace,"SFMono-Regular",Menlo,monospace;font-size:.9rem}
code{overflow-wrap:anywhere}
pre{background:var(--panel);padding:.5rem;overflow:auto;white-space:pre-wrap;word-break:break-word}
form.stack{display:grid;gap:.75rem;max-width:44rem}
.field{display:grid;gap:.25rem}
label{font-weight:600}.hint{color:var(--muted);font-size:.9rem;margin:0}
input,select,textarea{font:inherit;color:var(--ink);padding:.4rem .5rem;border:1px solid rgb(118 118 128);border-radius:4px;background:#fff;width:100%}
input[type=checkbox]{width:auto}
textarea{min-height:6rem}
[aria-invalid=true]{border-color:var(--bad);border-width:2px}
.error{color:var(--bad);font-weight:600;margin:0}
button,.button{font:inherit;padding:.45rem .9rem;border-radius:4px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer;text-decoration:none;display:inline-block}
button.secondary{background:#fff;color:var(--accent)}
button.danger{background:var(--bad);border-color:var(--bad)}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.inline{display:inline}
.notice{border-left:4px solid var(--accent);background:var(--panel);padding:.5rem .75rem;margin:.75rem 0}
.notice.bad{border-color:var(--bad)}.notice.good{border-color:var(--good)}.notice.warn{border-color:var(--warn)}
.ok{color:var(--good);font-weight:600}.bad{color:var(--bad);font-weight:600}.warn{color:var(--warn);font-weight:600}
ins{background:#d7f5dd;text-decoration:none}del{background:#fde0e0}
.columns{display:grid;gap:1rem;grid-template-columns:repeat(auto-fit,minmax(18rem,1fr))}
.only{background:#fff3c4}
fieldset{border:1px solid var(--line);border-radius:4px}
@media (max-width:40rem){main{padding:.75rem}th,td{padding:.3rem}}
</style>`);

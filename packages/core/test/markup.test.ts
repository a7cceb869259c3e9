import { describe, expect, it } from 'vitest';
import { escapeHtml, isMarkup, markup, markupText, trustedMarkup } from '../src/markup.js';
import type { MarkupValue } from '../src/markup.js';

const HOSTILE = `"><script>alert('x')</script>&`;

describe('markup', () => {
  it('escapes the five characters that end text or a quoted attribute value', () => {
    expect(escapeHtml(HOSTILE)).toBe('&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;');
    expect(escapeHtml(`a'b"c`)).toBe('a&#39;b&quot;c');
    expect(escapeHtml('plain text, unicode ✓')).toBe('plain text, unicode ✓');
  });

  it('escapes every interpolated value, in text and in attributes, unless it is markup made by the tag', () => {
    const out = markupText(markup`<p title="${HOSTILE}">${HOSTILE}${markup`<b>${HOSTILE}</b>`}</p>`);
    expect(out).not.toContain('<script>');
    expect(out).toBe(`<p title="${escapeHtml(HOSTILE)}">${escapeHtml(HOSTILE)}<b>${escapeHtml(HOSTILE)}</b></p>`);
  });

  it('renders lists joined, numbers as digits, and nothing for undefined, null and false', () => {
    expect(markupText(markup`${['<a>', markup`<i></i>`, [1, [2]]]}${3.5}${undefined}${null}${false}`)).toBe(
      '&lt;a&gt;<i></i>123.5',
    );
    const shown = true;
    expect(markupText(markup`${shown && markup`<em>on</em>`}${!shown && 'off'}`)).toBe('<em>on</em>');
  });

  it('never trusts a look-alike object: only fragments the module made are unescaped', () => {
    const forged = { text: '<script>' } as unknown as MarkupValue;
    expect(markupText(markup`${forged}`)).toBe('[object Object]');
    expect(isMarkup({ text: '<b>' })).toBe(false);
    expect(isMarkup(markup`<b>`)).toBe(true);
  });

  it('keeps a literal part as written, byte for byte (a style sheet pinned by its hash)', () => {
    const sheet = '<style>\n  a > b { content: "&" }\n</style>';
    expect(markupText(trustedMarkup(sheet))).toBe(sheet);
    expect(markupText(markup`${trustedMarkup(sheet)}`)).toBe(sheet);
    expect(markupText(markup`<x>\n  ${'y'}  </x>`)).toBe('<x>\n  y  </x>');
  });
});

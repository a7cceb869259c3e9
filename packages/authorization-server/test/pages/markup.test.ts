import { describe, expect, it } from 'vitest';
import { consentPage } from '../../src/pages/consent-page.js';
import { displayText } from '../../src/pages/display-text.js';
import { escapeHtml, markup, markupText } from '../../src/pages/markup.js';
import { PAGE_HEADERS } from '../../src/pages/send-page.js';

describe('markup', () => {
  it('escapes every interpolated value, in text and in attributes, unless it is markup made by the tag', () => {
    const value = `"><script>alert('x')</script>&`;
    const out = markupText(markup`<p title="${value}">${value}${markup`<b>${value}</b>`}</p>`);
    expect(out).not.toContain('<script>');
    expect(out).toBe(`<p title="${escapeHtml(value)}">${escapeHtml(value)}<b>${escapeHtml(value)}</b></p>`);
    expect(escapeHtml(value)).toBe('&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;');
  });

  it('renders lists, numbers, and nothing for undefined and false', () => {
    expect(markupText(markup`${['<a>', markup`<i></i>`]}${2}${undefined}${false}`)).toBe('&lt;a&gt;<i></i>2');
  });
});

describe('displayText', () => {
  it('removes control and bidirectional characters, collapses white space and cuts with an ellipsis', () => {
    expect(displayText('Evil\u202Eexe.gnp', 80)).toBe('Evil exe.gnp');
    expect(displayText(' a\n\tb\u0000c ', 80)).toBe('a b c');
    expect(displayText('x'.repeat(100), 10)).toBe(`${'x'.repeat(9)}…`);
    expect([...displayText('😀'.repeat(20), 10)]).toHaveLength(10);
  });
});

describe('the consent page', () => {
  const page = (name: string | undefined) =>
    markupText(
      consentPage({
        tenantName: 'Acme <Research>',
        client: { name, id: 'id"><x', redirectHost: 'app.example' },
        scopes: ['openid', 'custom<scope>'],
        resources: ['https://gw.example/t/acme/mcp'],
        formAction: '/t/acme/oauth/interaction/abc',
        csrfToken: 'token"x',
      }),
    );

  it('carries the CSRF token and escapes everything the client and the tenant chose', () => {
    const out = page('<script>alert(1)</script>');
    expect(out).not.toMatch(/<script/i);
    expect(out).toContain('<input type="hidden" name="csrf" value="token&quot;x">');
    expect(out).toContain('Acme &lt;Research&gt;');
    expect(out).toContain('id&quot;&gt;&lt;x');
    expect(out).toContain('custom&lt;scope&gt;');
    expect(out).toContain('<button type="submit" class="primary" name="decision" value="allow">Allow</button>');
    expect(out).toContain('<button type="submit" class="secondary" name="decision" value="deny">Deny</button>');
  });

  it('names a client without a name as an application', () => {
    expect(page(undefined)).toContain('<h1>Allow this application?</h1>');
  });

  it('is sent with a CSP that allows no script and only its own style sheet', () => {
    const csp = PAGE_HEADERS['Content-Security-Policy'] ?? '';
    expect(csp).toMatch(
      /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]+=*'; frame-ancestors 'none'; base-uri 'none'$/,
    );
  });
});

import { describe, expect, it } from 'vitest';
import { previewPage } from '../src/console/preview-page.js';
import type { PreviewResponse } from '../src/preview-schema.js';

// The console's "Preview as" page shows what the preview answers, the backend
// identity of each source that answers under the caller's own (a Postgres
// role and its settings, an S3 role with its session name and tags) among
// it, escaped like every value the console writes.

const preview = (backendIdentities?: PreviewResponse['backendIdentities']): PreviewResponse => ({
  tenantId: 'acme',
  revision: 3,
  from: 'claims',
  admitted: true,
  principal: { issuer: 'https://idp.example', subject: 'ann', scopes: ['staff'], groups: ['finance'] },
  grants: { matched: [{ name: 'staff', allow: [{ source: 'reports' }] }], unmatched: [] },
  resources: { items: [], hasMore: false, unavailableSources: [], incompleteSources: [] },
  warnings: [],
  ...(backendIdentities === undefined ? {} : { backendIdentities }),
});

const render = (result: PreviewResponse) =>
  previewPage({
    tenantId: 'acme',
    viewer: { kind: 'tenant-admin', subject: 'ops', csrfToken: 't' },
    a: { values: {}, result },
    b: { values: {} },
  });

describe('the console preview page', () => {
  it('shows the S3 role, session name and tags, and the Postgres role and settings, of the previewed caller', () => {
    const html = render(
      preview([
        {
          source: 'reports',
          identity: {
            roleArn: 'arn:aws:iam::123456789012:role/reports-finance',
            roleSessionName: 'ann',
            sessionTags: { team: 'emea finance', tenant: 'acme' },
          },
        },
        { source: 'crm', identity: { role: 'crm_sales', settings: { 'mcpgw.subject': '<b>ann</b>' } } },
      ]),
    );
    expect(html).toContain('Backend identity');
    expect(html).toContain('<dt>Source <code>reports</code></dt>');
    expect(html).toContain('roleArn: <code>arn:aws:iam::123456789012:role/reports-finance</code>');
    expect(html).toContain('roleSessionName: <code>ann</code>');
    expect(html).toContain(
      'sessionTags: <code>{&quot;team&quot;:&quot;emea finance&quot;,&quot;tenant&quot;:&quot;acme&quot;}</code>',
    );
    expect(html).toContain('role: <code>crm_sales</code>');
    // A claim's value reaches the page as text, never as markup.
    expect(html).not.toContain('<b>ann</b>');
    expect(html).toContain('&lt;b&gt;ann&lt;/b&gt;');
  });

  it('says nothing of a backend identity when no source has one', () => {
    expect(render(preview())).not.toContain('Backend identity');
  });
});

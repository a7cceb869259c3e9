import type { Markup, MarkupValue } from '@mcpgw/core';
import { markup, markupText } from '@mcpgw/core';
import { CONSOLE_SCRIPT_URL } from './console-script.js';
import { consoleStyles } from './console-styles.js';
import { CONSOLE_PREFIX, tenantConsolePath, type TenantPage } from './console-paths.js';

/** Who is signed in, for the page's header. */
export interface ConsoleViewer {
  readonly kind: 'operator' | 'tenant-admin';
  readonly subject: string;
  /** Set for a browser session: sign-out posts it back (a form's CSRF token). */
  readonly csrfToken?: string;
}

export interface ConsolePageInput {
  readonly title: string;
  readonly main: MarkupValue;
  /** The tenant the page is about, with the page highlighted in its navigation. */
  readonly tenant?: { readonly id: string; readonly page: TenantPage | 'overview' };
  readonly viewer?: ConsoleViewer;
  /** Loads the console's one same-origin script (console-script.ts), for a page it enhances. */
  readonly script?: boolean;
}

const TABS: readonly { page: TenantPage | 'overview'; label: string }[] = [
  { page: 'overview', label: 'Overview' },
  { page: 'sources', label: 'Sources' },
  { page: 'grants', label: 'Grants' },
  { page: 'preview', label: 'Preview as' },
  { page: 'audit', label: 'Audit log' },
  { page: 'access', label: 'Access' },
  { page: 'issuers', label: 'Issuers' },
  { page: 'admin-role-bindings', label: 'Admins' },
  { page: 'connected-apps', label: 'Connected apps' },
];

function tenantNav(tenantId: string, current: TenantPage | 'overview'): Markup {
  return markup`<nav class="tabs" aria-label="Tenant ${tenantId}">
    <ul>
      ${TABS.map(
        ({ page, label }) =>
          markup`<li>
            <a
              href="${tenantConsolePath(tenantId, page === 'overview' ? undefined : page)}"
              ${page === current ? markup` aria-current="page"` : ''}
              >${label}</a
            >
          </li>`,
      )}
    </ul>
  </nav>`;
}

function signOut(tenantId: string | undefined, viewer: ConsoleViewer | undefined): MarkupValue {
  if (viewer?.csrfToken === undefined) return undefined;
  // An operator's session is no tenant's; a tenant admin's signs out on its tenant's path.
  const action =
    viewer.kind === 'operator'
      ? `${CONSOLE_PREFIX}/operator/sign-out`
      : tenantId === undefined
        ? undefined
        : tenantConsolePath(tenantId, 'sign-out');
  if (action === undefined) return undefined;
  return markup`<form class="inline" method="post" action="${action}">
    <input type="hidden" name="csrf" value="${viewer.csrfToken}" /><button class="secondary" type="submit">
      Sign out
    </button>
  </form>`;
}

/** A whole console page: one stylesheet, a skip link, the tenant's navigation, the main content. */
export function consolePage(input: ConsolePageInput): string {
  const { tenant, viewer } = input;
  return markupText(markup`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${input.title} · MCP gateway console</title>
        ${consoleStyles}${input.script === true ? markup`<script src="${CONSOLE_SCRIPT_URL}" defer></script>` : ''}
      </head>
      <body>
        <a class="skip" href="#main">Skip to content</a>
        <header class="top">
          <a class="brand" href="/admin/">MCP gateway console</a>
          ${tenant === undefined ? '' : tenantNav(tenant.id, tenant.page)}
          ${
            viewer === undefined
              ? ''
              : markup`<span class="who"
                  >Signed in as <strong>${viewer.subject}</strong> (${
                    viewer.kind === 'operator' ? 'operator' : `admin of ${tenant?.id ?? ''}`
                  })
                  ${signOut(tenant?.id, viewer)}</span
                >`
          }
        </header>
        <main id="main" tabindex="-1">
          <h1>${input.title}</h1>
          ${input.main}
        </main>
      </body>
    </html>`);
}

import type { z } from 'zod';
import type { tenantViewSchema } from '../admin-schemas.js';
import type { ConsoleViewer } from './console-layout.js';
import { consolePage } from './console-layout.js';
import { CONSOLE_PREFIX, tenantConsolePath } from './console-paths.js';
import type { PlacedProblem } from './form-problem.js';
import { field, problemSummary, writeFields } from './form-problem.js';
import type { MarkupValue } from '@mcpgw/core';
import { markup } from '@mcpgw/core';
import { scrollRegionStart } from './scroll-region.js';

export type TenantView = z.infer<typeof tenantViewSchema>;

/** Operators: every tenant with its status; create, suspend, resume, delete. */
export function tenantsPage(input: {
  viewer: ConsoleViewer;
  tenants: readonly TenantView[];
  values?: Readonly<Record<string, string>>;
  placed?: PlacedProblem;
  notice?: MarkupValue;
}): string {
  const action = `${CONSOLE_PREFIX}/tenants`;
  const csrf = input.viewer.csrfToken;
  return consolePage({
    title: 'Tenants',
    viewer: input.viewer,
    main: markup`${input.notice === undefined ? '' : markup`<div role="status">${input.notice}</div>`}
      ${scrollRegionStart('Tenants')}
        <table>
          <thead>
            <tr>
              <th scope="col">Tenant</th>
              <th scope="col">Status</th>
              <th scope="col">Revision</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            ${input.tenants.map(
              (tenant) =>
                markup`<tr>
                  <th scope="row">
                    <a href="${tenantConsolePath(tenant.id)}">${tenant.id}</a>${
                      tenant.settings.name === undefined
                        ? ''
                        : markup`<br /><span class="hint">${String(tenant.settings.name)}</span>`
                    }
                  </th>
                  <td class="${tenant.status === 'active' ? 'ok' : 'bad'}">${tenant.status}</td>
                  <td>${tenant.revision}<br /><span class="hint">managed by ${tenant.managedBy}</span></td>
                  <td>
                    <div class="actions">
                      <form
                        class="inline"
                        method="post"
                        action="${action}/${tenant.id}/${tenant.status === 'active' ? 'suspend' : 'resume'}"
                      >
                        ${writeFields(csrf, tenant.version)}<input
                          type="hidden"
                          name="tenantId"
                          value="${tenant.id}"
                        /><button class="secondary" type="submit">
                          ${tenant.status === 'active' ? 'Suspend' : 'Resume'}<span class="skip"> ${tenant.id}</span>
                        </button>
                      </form>
                      <form class="inline" method="post" action="${action}/${tenant.id}/delete">
                        ${writeFields(csrf, tenant.version)}<input
                          type="hidden"
                          name="tenantId"
                          value="${tenant.id}"
                        /><button class="danger" type="submit">Delete<span class="skip"> ${tenant.id}</span></button>
                      </form>
                    </div>
                  </td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
      <h2>Create a tenant</h2>
      ${problemSummary(input.placed)}
      <form class="stack" method="post" action="${action}">
        ${writeFields(csrf)}
        ${field({ name: 'id', label: 'Id', value: input.values?.id ?? '', required: true, hint: 'Lower-case letters, digits and dashes; its MCP endpoint is /t/{id}/mcp.', placed: input.placed })}
        ${field({ name: 'name', label: 'Display name (optional)', value: input.values?.name ?? '', placed: input.placed })}
        <div class="actions"><button type="submit">Create tenant</button></div>
      </form>`,
  });
}

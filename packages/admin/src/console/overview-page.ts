import type { z } from 'zod';
import type { tenantStatusView } from '../admin-schemas.js';
import type { ConsoleViewer } from './console-layout.js';
import { consolePage } from './console-layout.js';
import { tenantConsolePath } from './console-paths.js';
import { markup } from '@mcpgw/core';
import { scrollRegionStart } from './scroll-region.js';
import type { TrafficMinuteView } from './traffic-charts.js';
import { trafficCharts } from './traffic-charts.js';

export type TenantStatusView = z.infer<typeof tenantStatusView>;

/** The tenant overview: whether this replica serves the stored revision, and each source's health, last change and last error. */
export function overviewPage(input: {
  tenantId: string;
  viewer: ConsoleViewer;
  status: TenantStatusView;
  /** The last hour, a minute at a time, oldest first. */
  traffic?: readonly TrafficMinuteView[];
}): string {
  const { status, tenantId } = input;
  const { runtime, tenant } = status;
  return consolePage({
    title: `Tenant ${tenant.settings.name === undefined ? tenantId : String(tenant.settings.name)}`,
    tenant: { id: tenantId, page: 'overview' },
    viewer: input.viewer,
    main: markup`<dl class="columns">
        <div>
          <dt>Id</dt>
          <dd><code>${tenant.id}</code></dd>
        </div>
        <div>
          <dt>Status</dt>
          <dd class="${tenant.status === 'active' ? 'ok' : 'bad'}">${tenant.status}</dd>
        </div>
        <div>
          <dt>Served on this replica</dt>
          <dd class="${runtime.serving ? 'ok' : 'bad'}">${runtime.serving ? 'yes' : 'no'}</dd>
        </div>
        <div>
          <dt>Revision</dt>
          <dd>
            stored ${runtime.revision}, applied
            ${runtime.appliedRevision ?? '–'}${
              runtime.upToDate ? '' : markup` <span class="warn">(not up to date)</span>`
            }
          </dd>
        </div>
        <div>
          <dt>Managed by</dt>
          <dd>${tenant.managedBy}</dd>
        </div>
        <div>
          <dt>MCP endpoint</dt>
          <dd><code>/t/${tenant.id}/mcp</code></dd>
        </div>
      </dl>
      ${
        runtime.lastError === undefined
          ? ''
          : markup`<div class="notice bad" role="alert">
              <p>
                <strong>The applied revision could not be built</strong> (revision ${runtime.lastError.revision ?? '?'},
                ${runtime.lastError.at}): ${runtime.lastError.message}
              </p>
            </div>`
      }
      ${input.traffic === undefined ? '' : trafficCharts(input.traffic)}
      <h2>Sources</h2>
      ${
        status.sources.length === 0
          ? markup`<p>No source yet: <a href="${tenantConsolePath(tenantId, 'sources')}">add one</a>.</p>`
          : markup`${scrollRegionStart('Sources')}
              <table>
                <thead>
                  <tr>
                    <th scope="col">Source</th>
                    <th scope="col">Health</th>
                    <th scope="col">Last change</th>
                    <th scope="col">Last error</th>
                  </tr>
                </thead>
                <tbody>
                  ${status.sources.map(
                    (source) =>
                      markup`<tr>
                        <th scope="row">${source.name}</th>
                        <td>
                          ${
                            source.health === undefined
                              ? markup`<span class="bad">not serving</span>`
                              : source.health.ok
                                ? markup`<span class="ok">healthy</span>`
                                : markup`<span class="bad">unhealthy</span>`
                          }${source.health?.detail === undefined ? '' : markup`<br /><span class="hint">${source.health.detail}</span>`}
                        </td>
                        <td>${source.lastChange ?? '–'}</td>
                        <td>
                          ${
                            source.lastError === undefined
                              ? 'none'
                              : markup`<span class="bad">${source.lastError.message}</span><br /><span class="hint"
                                    >${source.lastError.at}</span
                                  >`
                          }
                        </td>
                      </tr>`,
                  )}
                </tbody>
              </table>
            </div>`
      }`,
  });
}

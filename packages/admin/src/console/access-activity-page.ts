import { markup } from '@mcpgw/core';
import type { ConsoleViewer } from './console-layout.js';
import { consolePage } from './console-layout.js';
import { tenantConsolePath } from './console-paths.js';
import { field } from './form-problem.js';
import { scrollRegionStart } from './scroll-region.js';

/** One caller's access to one resource (or its listing), as the gateway recorded it. */
export interface AccessRecordView {
  readonly principal: string;
  readonly clientId?: string | undefined;
  readonly subject?: string | undefined;
  readonly action: 'read' | 'list';
  readonly resource?: string | undefined;
  readonly grants: readonly string[];
  readonly at: number;
}

export interface AccessFilters {
  /** Part of the caller's fingerprint, client id or subject. */
  readonly caller?: string;
  /** Part of the resource's URI. */
  readonly resource?: string;
}

/** The records that pass the filters (each a case-insensitive substring). */
export function filterAccess(records: readonly AccessRecordView[], filters: AccessFilters): AccessRecordView[] {
  const caller = filters.caller?.toLowerCase();
  const resource = filters.resource?.toLowerCase();
  return records.filter(
    (record) =>
      (caller === undefined ||
        [record.principal, record.clientId, record.subject].some((value) => value?.toLowerCase().includes(caller))) &&
      (resource === undefined || (record.resource ?? '').toLowerCase().includes(resource)),
  );
}

/** Which callers read or listed which resources within the retention, newest first, filtered. */
export function accessActivityPage(input: {
  tenantId: string;
  viewer: ConsoleViewer;
  filters: AccessFilters;
  records: readonly AccessRecordView[];
  retentionHours: number;
}): string {
  const { tenantId, filters, records } = input;
  const base = tenantConsolePath(tenantId, 'access');
  return consolePage({
    title: 'Access activity',
    tenant: { id: tenantId, page: 'access' },
    viewer: input.viewer,
    main: markup`<p class="hint">
        Who read or listed what in the last ${input.retentionHours} hours, on every replica. A caller is named by
        its fingerprint within this tenant (as the preview shows it) and its client id; its subject only when a
        grant of this tenant matches on subjects. No token or other claim is kept.
      </p>
      <form class="stack" method="get" action="${base}">
        <div class="columns">
          ${field({ name: 'caller', label: 'Caller (fingerprint, client id or subject)', value: filters.caller ?? '' })}
          ${field({ name: 'resource', label: 'Resource (part of the URI)', value: filters.resource ?? '' })}
        </div>
        <div class="actions"><button type="submit">Filter</button><a href="${base}">Clear filters</a></div>
      </form>
      ${
        records.length === 0
          ? markup`<p>No access recorded${filters.caller === undefined && filters.resource === undefined ? '' : ' that matches'}.</p>`
          : markup`${scrollRegionStart('Access activity')}
              <table>
                <thead>
                  <tr>
                    <th scope="col">Caller</th>
                    <th scope="col">Client</th>
                    <th scope="col">Did</th>
                    <th scope="col">Grants matched</th>
                    <th scope="col">Last time (UTC)</th>
                  </tr>
                </thead>
                <tbody>
                  ${records.map(
                    (record) => markup`<tr>
                      <th scope="row"><code>${record.principal}</code>${record.subject === undefined ? '' : markup`<br /><span class="hint">subject ${record.subject}</span>`}</th>
                      <td>${record.clientId ?? '–'}</td>
                      <td>${record.action === 'read' ? markup`read <code>${record.resource ?? ''}</code>` : 'listed resources'}</td>
                      <td>${record.grants.length === 0 ? 'none' : record.grants.join(', ')}</td>
                      <td>${new Date(record.at).toISOString()}</td>
                    </tr>`,
                  )}
                </tbody>
              </table>
            </div>`
      }`,
  });
}

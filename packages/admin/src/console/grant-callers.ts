import type { Markup } from '@mcpgw/core';
import { markup } from '@mcpgw/core';
import type { AccessRecordView } from './access-activity-page.js';
import { tenantConsolePath } from './console-paths.js';

/** A caller a grant matched lately: who (as the access activity names them) and when last. */
export interface GrantCaller {
  readonly principal: string;
  readonly clientId?: string | undefined;
  readonly subject?: string | undefined;
  readonly at: number;
}

/** How many callers a grant's row names; the rest are a link to the access page. */
const SHOWN = 5;

/**
 * Per grant name, the distinct callers (fingerprint, client id, subject) the
 * access activity saw it match, newest first. `records` is the activity as
 * listed (newest first), so a caller's first record is its latest.
 */
export function callersByGrant(records: readonly AccessRecordView[]): Map<string, GrantCaller[]> {
  const byGrant = new Map<string, Map<string, GrantCaller>>();
  for (const record of records) {
    const key = JSON.stringify([record.principal, record.clientId ?? null, record.subject ?? null]);
    for (const grant of record.grants) {
      let callers = byGrant.get(grant);
      if (callers === undefined) {
        callers = new Map();
        byGrant.set(grant, callers);
      }
      const seen = callers.get(key);
      if (seen === undefined || seen.at < record.at) {
        callers.set(key, {
          principal: record.principal,
          at: record.at,
          ...(record.clientId === undefined ? {} : { clientId: record.clientId }),
          ...(record.subject === undefined ? {} : { subject: record.subject }),
        });
      }
    }
  }
  return new Map(
    [...byGrant].map(([grant, callers]) => [grant, [...callers.values()].sort((a, b) => b.at - a.at)] as const),
  );
}

/** A grant row's "Recent callers" cell: up to five callers, each linking to its access activity. */
export function grantCallersCell(tenantId: string, callers: readonly GrantCaller[] | undefined): Markup {
  if (callers === undefined || callers.length === 0) return markup`<span class="hint">none lately</span>`;
  const access = tenantConsolePath(tenantId, 'access');
  return markup`<ul class="plain">
      ${callers.slice(0, SHOWN).map(
        (caller) =>
          markup`<li>
            <a href="${access}?caller=${encodeURIComponent(caller.principal)}"><code>${caller.principal}</code></a>${
              caller.clientId === undefined ? '' : markup` via ${caller.clientId}`
            }${caller.subject === undefined ? '' : markup` <span class="hint">(subject ${caller.subject})</span>`}
            <br /><span class="hint">${new Date(caller.at).toISOString()}</span>
          </li>`,
      )}
    </ul>${callers.length > SHOWN ? markup`<span class="hint">and ${callers.length - SHOWN} more</span>` : ''}`;
}

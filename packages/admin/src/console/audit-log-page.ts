import type { z } from 'zod';
import { AUDIT_ACTIONS } from '@mcpgw/control-plane';
import type { auditPage } from '../admin-schemas.js';
import type { ConsoleViewer } from './console-layout.js';
import { consolePage } from './console-layout.js';
import { tenantConsolePath } from './console-paths.js';
import { changesTable } from './changes-table.js';
import type { PlacedProblem } from './form-problem.js';
import { field, problemSummary } from './form-problem.js';
import { markup } from '@mcpgw/core';
import { jsonChanges } from './json-diff.js';

export type AuditPageView = z.infer<typeof auditPage>;

/** The audit log's filters as the page's query carries them (a GET form: bookmarkable). */
export const AUDIT_FILTERS = ['actor', 'action', 'targetType', 'targetId', 'since', 'until'] as const;

function select(
  name: string,
  label: string,
  options: readonly string[],
  value: string | undefined,
  placed: PlacedProblem | undefined,
) {
  const errors = placed?.byField.get(name) ?? [];
  return markup`<div class="field">
    <label for="f-${name}">${label}</label
    ><select
      id="f-${name}"
      name="${name}"
      ${errors.length === 0 ? '' : markup` aria-invalid="true" aria-describedby="f-${name}-error"`}
    >
      <option value="">any</option>
      ${options.map((option) => markup`<option${option === value ? markup` selected` : ''}>${option}</option>`)}</select
    >${errors.length === 0 ? '' : markup`<p class="error" id="f-${name}-error">${errors.join('; ')}</p>`}
  </div>`;
}

/** The audit log: filters by actor, action, target and time, newest first, a page at a time, each change as a diff. */
export function auditConsolePage(input: {
  tenantId: string;
  viewer: ConsoleViewer;
  filters: Readonly<Record<string, string>>;
  page?: AuditPageView;
  placed?: PlacedProblem;
}): string {
  const { filters, page, placed } = input;
  const base = tenantConsolePath(input.tenantId, 'audit');
  const kept = new URLSearchParams(
    Object.entries(filters).filter(
      ([key, value]) => (AUDIT_FILTERS as readonly string[]).includes(key) && value !== '',
    ),
  );
  const next =
    page?.nextCursor === undefined
      ? undefined
      : `${base}?${new URLSearchParams([...kept, ['cursor', page.nextCursor]])}`;
  return consolePage({
    title: 'Audit log',
    tenant: { id: input.tenantId, page: 'audit' },
    viewer: input.viewer,
    main: markup`<form method="get" action="${base}" aria-label="Filter the audit log">
        <div class="columns">
          ${field({ name: 'actor', label: 'Actor (subject)', value: filters.actor ?? '', placed })}
          ${select('action', 'Action', AUDIT_ACTIONS, filters.action, placed)}
          ${select('targetType', 'Target type', ['tenant', 'issuer', 'source', 'grant', 'admin-role-binding'], filters.targetType, placed)}
          ${field({ name: 'targetId', label: 'Target name', value: filters.targetId ?? '', placed })}
          ${field({ name: 'since', label: 'Since (UTC)', kind: 'datetime-local', value: filters.since ?? '', placed })}
          ${field({ name: 'until', label: 'Until (UTC)', kind: 'datetime-local', value: filters.until ?? '', placed })}
        </div>
        <div class="actions"><button type="submit">Filter</button><a href="${base}">Clear filters</a></div>
      </form>
      ${problemSummary(placed)}
      ${
        page === undefined
          ? ''
          : page.events.length === 0
            ? markup`<p>No events.</p>`
            : markup`<ol class="events" aria-label="Events, newest first">
                ${page.events.map(
                  (event) =>
                    markup`<li>
                      <p>
                        <strong>${event.action}</strong> ${event.targetType} <code>${event.targetId}</code> by
                        <code>${event.actor.subject}</code> (${event.actor.kind}${
                          event.clientAddress === null ? '' : `, from ${event.clientAddress}`
                        })
                        at <time datetime="${event.occurredAt}">${event.occurredAt}</time>
                      </p>
                      <details>
                        <summary>What changed</summary>
                        ${changesTable(jsonChanges(event.before, event.after), { before: 'Before', after: 'After' })}
                      </details>
                    </li>`,
                )}
              </ol>`
      }
      ${next === undefined ? '' : markup`<p><a href="${next}">Older events</a></p>`}`,
  });
}

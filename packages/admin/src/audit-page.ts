import type { z } from 'zod';
import type { AuditEvent, ControlPlaneStore } from '@mcpgw/control-plane';
import type { auditQuery } from './admin-schemas.js';
import { requireTenant } from './admin-views.js';
import { AdminProblem } from './problem.js';

const DEFAULT_PAGE = 50;

/**
 * The cursor is opaque to clients (they pass back what they got): today the
 * id of the last event of the page, base64url-wrapped so that nobody builds
 * one by hand and the format can change.
 */
const encodeCursor = (id: string): string => Buffer.from(`audit:${id}`, 'utf8').toString('base64url');

function decodeCursor(cursor: string): string {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^audit:(\d{1,18})$/.exec(text);
  if (match === null) {
    throw new AdminProblem('invalid-request', 'The cursor is not one this API issued', [
      { parameter: 'cursor', detail: 'pass back the nextCursor of a previous page, unchanged' },
    ]);
  }
  return match[1] as string;
}

/** One page of the audit log as the API answers it: the events without their tenant, and the next page's cursor. */
export interface AuditLogPage {
  readonly events: readonly Omit<AuditEvent, 'tenantId'>[];
  readonly nextCursor?: string;
}

/**
 * One page of a tenant's audit log, newest first (docs/admin-api.md, "Audit
 * log"): the filters combine, and `nextCursor` is there when the page is full.
 */
export async function auditLogPage(
  deps: { readonly store: Pick<ControlPlaneStore, 'getTenant' | 'auditEvents'> },
  tenantId: string,
  query: z.output<typeof auditQuery>,
): Promise<AuditLogPage> {
  const tenant = await requireTenant(deps, tenantId);
  const limit = query.limit ?? DEFAULT_PAGE;
  const events = await deps.store.auditEvents(tenant.id, {
    limit,
    ...(query.cursor === undefined ? {} : { before: decodeCursor(query.cursor) }),
    ...(query.action === undefined ? {} : { action: query.action }),
    ...(query.targetType === undefined ? {} : { targetType: query.targetType }),
    ...(query.targetId === undefined ? {} : { targetId: query.targetId }),
    ...(query.actor === undefined ? {} : { actorSubject: query.actor }),
    ...(query.since === undefined ? {} : { since: query.since }),
    ...(query.until === undefined ? {} : { until: query.until }),
  });
  const last = events.at(-1);
  return {
    events: events.map(({ tenantId: _tenant, ...event }) => event),
    ...(events.length === limit && last !== undefined ? { nextCursor: encodeCursor(last.id) } : {}),
  };
}

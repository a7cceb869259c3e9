import type { SqlExecutor } from './sql-database.js';
import type { Actor, WriteContext } from './write-context.js';

/**
 * What happened: a write (`create`, `update`, `delete`), or a step of a
 * tenant's hosted authorization server (docs/admin-api.md, "Audit log"):
 * `register` (dynamic client registration), `consent` (a grant created or
 * extended), `revoke` (a grant ended by the server itself, as on refresh
 * token reuse), `exchange` (an identity assertion exchanged for tokens),
 * `refuse` (a sign-in at the tenant's identity provider that was refused
 * there, signed nobody in, or sent an ID token that failed its checks).
 */
export const AUDIT_ACTIONS = [
  'create',
  'update',
  'delete',
  'register',
  'consent',
  'revoke',
  'exchange',
  'refuse',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** One audited change: who, when, from where, what, before and after (never a credential). */
export interface AuditEvent {
  readonly id: string;
  readonly tenantId: string | null;
  readonly occurredAt: string;
  readonly actor: Actor;
  readonly clientAddress: string | null;
  readonly action: AuditAction;
  readonly targetType: string;
  readonly targetId: string;
  readonly before: unknown;
  readonly after: unknown;
}

export interface AuditQuery {
  /** Events older than this id (paging backwards from the newest). */
  readonly before?: string;
  /** At most this many, 1 to 200; default 50. */
  readonly limit?: number;
  readonly targetType?: string;
  readonly targetId?: string;
  readonly action?: AuditEvent['action'];
  /** The actor's `subject` (a token's `sub`, or the bootstrap file's path). */
  readonly actorSubject?: string;
  /** Events at or after this instant (ISO 8601). */
  readonly since?: string;
  /** Events before this instant (ISO 8601). */
  readonly until?: string;
}

interface AuditRow {
  id: string;
  tenant_id: string | null;
  occurred_at: Date | string;
  actor: Actor;
  client_address: string | null;
  action: AuditEvent['action'];
  target_type: string;
  target_id: string;
  before: unknown;
  after: unknown;
}

/** Writes one event inside the caller's transaction, so the change and its record commit together. */
export async function recordAudit(
  tx: SqlExecutor,
  context: WriteContext,
  event: Pick<AuditEvent, 'tenantId' | 'action' | 'targetType' | 'targetId' | 'before' | 'after'>,
): Promise<void> {
  await tx.query(
    `INSERT INTO audit_events (tenant_id, actor, client_address, action, target_type, target_id, before, after)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      event.tenantId,
      JSON.stringify(context.actor),
      context.clientAddress ?? null,
      event.action,
      event.targetType,
      event.targetId,
      event.before === undefined ? null : JSON.stringify(event.before),
      event.after === undefined ? null : JSON.stringify(event.after),
    ],
  );
}

/**
 * A tenant's events, newest first, filtered and paged by id. The id is
 * selected as text (a bigint may exceed a JavaScript number) under the
 * column's own name, so the order names the table's column: a bare `id`
 * would sort by the text alias ("9" after "10") and pages would skip and
 * repeat events.
 */
export async function listAuditEvents(
  db: SqlExecutor,
  tenantId: string,
  query: AuditQuery = {},
): Promise<AuditEvent[]> {
  const limit = Math.min(Math.max(query.limit ?? 50, 1), 200);
  const { rows } = await db.query<AuditRow>(
    `SELECT id::text AS id, tenant_id, occurred_at, actor, client_address, action, target_type, target_id, before, after
       FROM audit_events
      WHERE tenant_id = $1
        AND ($2::bigint IS NULL OR id < $2::bigint)
        AND ($3::text IS NULL OR target_type = $3)
        AND ($4::text IS NULL OR action = $4)
        AND ($6::text IS NULL OR target_id = $6)
        AND ($7::text IS NULL OR actor->>'subject' = $7)
        AND ($8::timestamptz IS NULL OR occurred_at >= $8::timestamptz)
        AND ($9::timestamptz IS NULL OR occurred_at < $9::timestamptz)
      ORDER BY audit_events.id DESC
      LIMIT $5`,
    [
      tenantId,
      query.before ?? null,
      query.targetType ?? null,
      query.action ?? null,
      limit,
      query.targetId ?? null,
      query.actorSubject ?? null,
      query.since ?? null,
      query.until ?? null,
    ],
  );
  return rows.map((row) => ({
    id: row.id,
    tenantId: row.tenant_id,
    occurredAt: new Date(row.occurred_at).toISOString(),
    actor: row.actor,
    clientAddress: row.client_address,
    action: row.action,
    targetType: row.target_type,
    targetId: row.target_id,
    before: row.before,
    after: row.after,
  }));
}

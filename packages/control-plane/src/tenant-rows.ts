import { recordAudit } from './audit-log.js';
import type { SqlDatabase, SqlExecutor } from './sql-database.js';
import { StoreError } from './store-error.js';
import type { CheckedWriteOptions, ReadsIn, WriteCheck } from './write-check.js';
import type { WriteContext } from './write-context.js';
import { checkPreconditions, type WriteOptions } from './write-preconditions.js';

/** NOTIFY channel carrying the id of a tenant whose configuration changed (every replica LISTENs). */
export const CONTROL_PLANE_CHANNEL = 'mcpgw_control_plane';

export type Document = Record<string, unknown>;

export interface StoredTenant {
  readonly id: string;
  readonly document: Document;
  readonly status: 'active' | 'suspended';
  /** `bootstrap` when GATEWAY_CONFIG declares it (the file wins for what it declares). */
  readonly managedBy: 'bootstrap' | 'api';
  /** The ETag's number: changes with every write to this row. */
  readonly version: number;
  /** Changes with every write to the tenant or anything it owns. */
  readonly revision: number;
  readonly updatedAt: string;
}

export interface TenantChange {
  readonly document?: Document;
  readonly status?: StoredTenant['status'];
  readonly managedBy?: StoredTenant['managedBy'];
}

interface TenantRow {
  id: string;
  document: Document;
  status: StoredTenant['status'];
  managed_by: StoredTenant['managedBy'];
  version: number;
  revision: string | number;
  updated_at: Date | string;
}

const TENANT_COLUMNS = 'id, document, status, managed_by, version, revision, updated_at';

function toTenant(row: TenantRow): StoredTenant {
  return {
    id: row.id,
    document: row.document,
    status: row.status,
    managedBy: row.managed_by,
    version: row.version,
    revision: Number(row.revision),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/** The audit view of a tenant row: what it is, not its counters. */
function auditedTenant(tenant: StoredTenant | undefined): unknown {
  return tenant === undefined
    ? undefined
    : { document: tenant.document, status: tenant.status, managedBy: tenant.managedBy };
}

/** Tells every replica, at commit, that a tenant's configuration changed. */
async function notifyChanged(tx: SqlExecutor, id: string): Promise<void> {
  await tx.query('SELECT pg_notify($1, $2)', [CONTROL_PLANE_CHANNEL, id]);
}

/**
 * Locks a tenant's row for the rest of the transaction: writes to one tenant
 * and what it owns are serialised on it.
 */
export async function lockTenant(tx: SqlExecutor, id: string): Promise<StoredTenant> {
  const { rows } = await tx.query<TenantRow>(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE id = $1 FOR UPDATE`, [id]);
  const row = rows[0];
  if (row === undefined) throw new StoreError('not_found', `tenant "${id}" does not exist`);
  return toTenant(row);
}

/** One tenant's row through `executor` (the database, or a write's transaction). */
export async function readTenant(executor: SqlExecutor, id: string): Promise<StoredTenant | undefined> {
  const { rows } = await executor.query<TenantRow>(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE id = $1`, [id]);
  return rows[0] === undefined ? undefined : toTenant(rows[0]);
}

/** A write to something the tenant owns: a new revision, and the change signal. */
export async function touchTenant(tx: SqlExecutor, id: string): Promise<void> {
  await tx.query('UPDATE tenants SET revision = revision + 1 WHERE id = $1', [id]);
  await notifyChanged(tx, id);
}

/** The tenant rows: reads, and writes each in one transaction with its audit event and change signal. */
export interface TenantRows {
  listTenants(): Promise<StoredTenant[]>;
  getTenant(id: string): Promise<StoredTenant | undefined>;
  createTenant(
    context: WriteContext,
    id: string,
    change: TenantChange,
    options?: { readonly check?: WriteCheck },
  ): Promise<StoredTenant>;
  updateTenant(
    context: WriteContext,
    id: string,
    change: TenantChange,
    options?: CheckedWriteOptions,
  ): Promise<StoredTenant>;
  /** Removes the tenant and everything it owns; its audit trail stays. */
  deleteTenant(context: WriteContext, id: string, options?: WriteOptions): Promise<void>;
  /** Every tenant's revision, for reconciliation against what a replica serves. */
  revisions(): Promise<Map<string, number>>;
}

/** `readsIn` gives each write's check the reads of its own transaction. */
export function createTenantRows(db: SqlDatabase, readsIn: ReadsIn): TenantRows {
  return {
    async listTenants() {
      const { rows } = await db.query<TenantRow>(`SELECT ${TENANT_COLUMNS} FROM tenants ORDER BY id`);
      return rows.map(toTenant);
    },

    getTenant: (id) => readTenant(db, id),

    createTenant(context, id, change, options = {}) {
      return db.transaction(async (tx) => {
        const { rows } = await tx.query<TenantRow>(
          // A tenant created again under an id that was deleted continues its revisions rather than
          // start over: replicas and the cache order a tenant's configurations by revision, and must
          // never take the old tenant's revision N for the new one's. Every revision came with one
          // audit event, and the trail outlives the tenant, so counting it gives a higher number.
          `INSERT INTO tenants (id, document, status, managed_by, revision)
           VALUES ($1, $2, $3, $4, 1 + (SELECT count(*) FROM audit_events WHERE tenant_id = $1))
           ON CONFLICT (id) DO NOTHING RETURNING ${TENANT_COLUMNS}`,
          [id, JSON.stringify(change.document ?? {}), change.status ?? 'active', change.managedBy ?? 'api'],
        );
        if (rows[0] === undefined) throw new StoreError('conflict', `tenant "${id}" already exists`);
        const created = toTenant(rows[0]);
        await options.check?.(readsIn(tx));
        await recordAudit(tx, context, {
          tenantId: id,
          action: 'create',
          targetType: 'tenant',
          targetId: id,
          before: undefined,
          after: auditedTenant(created),
        });
        await notifyChanged(tx, id);
        return created;
      });
    },

    updateTenant(context, id, change, options = {}) {
      return db.transaction(async (tx) => {
        const before = await lockTenant(tx, id);
        checkPreconditions(`tenant "${id}"`, before, options);
        const { rows } = await tx.query<TenantRow>(
          `UPDATE tenants SET document = $2, status = $3, managed_by = $4, version = version + 1,
                  revision = revision + 1, updated_at = now()
            WHERE id = $1 RETURNING ${TENANT_COLUMNS}`,
          [
            id,
            JSON.stringify(change.document ?? before.document),
            change.status ?? before.status,
            change.managedBy ?? before.managedBy,
          ],
        );
        const after = toTenant(rows[0] as TenantRow);
        await options.check?.(readsIn(tx));
        await recordAudit(tx, context, {
          tenantId: id,
          action: 'update',
          targetType: 'tenant',
          targetId: id,
          before: auditedTenant(before),
          after: auditedTenant(after),
        });
        await notifyChanged(tx, id);
        return after;
      });
    },

    deleteTenant(context, id, options = {}) {
      return db.transaction(async (tx) => {
        const before = await lockTenant(tx, id);
        checkPreconditions(`tenant "${id}"`, before, options);
        await tx.query('DELETE FROM tenants WHERE id = $1', [id]);
        await recordAudit(tx, context, {
          tenantId: id,
          action: 'delete',
          targetType: 'tenant',
          targetId: id,
          before: auditedTenant(before),
          after: undefined,
        });
        await notifyChanged(tx, id);
      });
    },

    async revisions() {
      const { rows } = await db.query<{ id: string; revision: string | number }>('SELECT id, revision FROM tenants');
      return new Map(rows.map((row) => [row.id, Number(row.revision)]));
    },
  };
}

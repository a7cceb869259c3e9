import { listAuditEvents } from './audit-log.js';
import type { AuditEvent, AuditQuery } from './audit-log.js';
import { createEntityRows, type EntityRows } from './entity-rows.js';
import type { SecretBox } from './secret-box.js';
import { createSourceSecrets } from './source-secrets.js';
import type { SqlDatabase } from './sql-database.js';
import { createTenantRows, type TenantRows } from './tenant-rows.js';

export { CONTROL_PLANE_CHANNEL } from './tenant-rows.js';
export type { Document, StoredTenant, TenantChange } from './tenant-rows.js';
export type { EntityWriteOptions, EntityWriter, StoredEntity, TenantEntityKind } from './entity-rows.js';
export type { WriteOptions } from './write-preconditions.js';

/** Tenants, what they own, and the audit trail of both. */
export interface ControlPlaneStore extends TenantRows, EntityRows {
  auditEvents(tenantId: string, query?: AuditQuery): Promise<AuditEvent[]>;
}

export interface ControlPlaneStoreOptions {
  readonly db: SqlDatabase;
  readonly secrets: SecretBox;
}

/**
 * Reads and writes the control plane. Every write runs in one transaction
 * with its audit event, the owning tenant's revision bump and a NOTIFY on
 * {@link CONTROL_PLANE_CHANNEL} (delivered at commit, so replicas never see
 * an uncommitted change). Writes to one tenant are serialised by locking its
 * row, so of two writers holding the same version exactly one succeeds.
 */
export function createControlPlaneStore({ db, secrets }: ControlPlaneStoreOptions): ControlPlaneStore {
  return {
    ...createTenantRows(db),
    ...createEntityRows(db, createSourceSecrets(secrets)),
    auditEvents: (tenantId, query) => listAuditEvents(db, tenantId, query),
  };
}

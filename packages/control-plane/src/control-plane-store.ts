import { listAuditEvents, recordAudit } from './audit-log.js';
import type { AuditEvent, AuditQuery } from './audit-log.js';
import { createEntityRows, entityReads, type EntityRows } from './entity-rows.js';
import { createExclusiveRunner, type ExclusiveRunner } from './exclusive-work.js';
import type { SecretBox } from './secret-box.js';
import { createAuthorizationServerSecrets, createSourceSecrets } from './source-secrets.js';
import type { SqlDatabase, SqlExecutor } from './sql-database.js';
import { createTenantRows, readTenant, type TenantRows } from './tenant-rows.js';
import type { ControlPlaneReads } from './write-check.js';
import type { WriteContext } from './write-context.js';

export { CONTROL_PLANE_CHANNEL } from './tenant-rows.js';
export type { Document, StoredTenant, TenantChange } from './tenant-rows.js';
export type { EntityWriteOptions, EntityWriter, StoredEntity, TenantEntityKind } from './entity-rows.js';
export type { WriteOptions } from './write-preconditions.js';

/** An audited action outside the control plane's own rows (ControlPlaneStore.recordEvent). */
export type RecordedEvent = Pick<AuditEvent, 'action' | 'targetType' | 'targetId' | 'before' | 'after'> & {
  readonly tenantId: string;
};
export type { CheckedWriteOptions, ControlPlaneReads, WriteCheck } from './write-check.js';

/** Tenants, what they own, and the audit trail of both. */
export interface ControlPlaneStore extends TenantRows, EntityRows {
  auditEvents(tenantId: string, query?: AuditQuery): Promise<AuditEvent[]>;
  /**
   * Records an action on something the control plane does not hold (a
   * connected client deleted, a user's grant revoked at the tenant's
   * authorization server) once it is done: who, from where, what it was.
   * No revision, no change signal: the tenant's configuration is the same.
   */
  recordEvent(context: WriteContext, event: RecordedEvent): Promise<void>;
  /**
   * Runs `work` while no other exclusive work runs on this control plane, on
   * this replica or another: applying the declared state reads, compares and
   * writes, and two replicas doing that at once would both create the same rows.
   */
  readonly exclusively: ExclusiveRunner;
  /**
   * Runs `work` with a store whose writes all share one transaction: they
   * commit together when `work` resolves (each still audited, the revision
   * bumped, the NOTIFY delivered at that commit) or none does. A declared
   * tenant is applied this way, so a failure halfway leaves it as it was.
   * The inner store is for writes and reads only: no `exclusively`, no
   * nested `inOneTransaction`.
   */
  inOneTransaction<T>(work: (store: ControlPlaneStore) => Promise<T>): Promise<T>;
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
 * row, so of two writers holding the same version exactly one succeeds, and
 * a write's check (a rule across what the tenant holds) sees the tenant as it
 * commits, whoever else is writing to it.
 */
export function createControlPlaneStore({ db, secrets }: ControlPlaneStoreOptions): ControlPlaneStore {
  const sourceSecrets = {
    source: createSourceSecrets(secrets),
    'authorization-server': createAuthorizationServerSecrets(secrets),
  };
  const readsIn = (executor: SqlExecutor): ControlPlaneReads => ({
    getTenant: (id) => readTenant(executor, id),
    ...entityReads(executor, sourceSecrets),
  });
  return {
    ...createTenantRows(db, readsIn),
    ...createEntityRows(db, sourceSecrets, readsIn),
    auditEvents: (tenantId, query) => listAuditEvents(db, tenantId, query),
    recordEvent: (context, event) => db.transaction((tx) => recordAudit(tx, context, event)),
    exclusively: createExclusiveRunner(db),
    inOneTransaction: (work) =>
      db.transaction((tx) => work(createControlPlaneStore({ db: withinTransaction(db, tx), secrets }))),
  };
}

/**
 * `tx` as a database whose every write transaction is `tx` itself: the
 * store's writes, each written as its own transaction, join the one that
 * is open (Postgres has no nested transactions; the outer one decides).
 */
function withinTransaction(db: SqlDatabase, tx: SqlExecutor): SqlDatabase {
  const refuse = (what: string) => () => {
    throw new Error(`${what} is not available inside one transaction`);
  };
  return {
    engine: db.engine,
    query: (text, values) => tx.query(text, values),
    exec: (script) => tx.exec(script),
    transaction: (work) => work(tx),
    listen: refuse('listen'),
    close: refuse('close'),
  };
}

// The public surface of @mcpgw/control-plane: what apps/gateway and other
// packages' tests use. Tests reach the other modules by path (../src/<module>.js).

/** The SQL surface shared by both engines. */
export type { SqlDatabase } from './sql-database.js';
/** The store on a Postgres server (DATABASE_URL). */
export { createPostgresDatabase } from './postgres-database.js';
/** The replica bus over Postgres LISTEN/NOTIFY, for several replicas without Redis (docs/adr/0012-one-bus-two-transports.md). */
export { BUS_CHANNEL, openPostgresReplicaBus } from './postgres-replica-bus.js';
export type { PostgresReplicaBus, PostgresReplicaBusOptions } from './postgres-replica-bus.js';
/** Change-detection leases as session advisory locks, beside a replica bus on Postgres. */
export { createPostgresLeases } from './postgres-leases.js';
export type { PostgresLeases, PostgresLeasesOptions } from './postgres-leases.js';
/** The embedded store (PGlite under DATA_DIR), the `npm start` default. */
export { createPgliteDatabase } from './pglite-database.js';
/** Brings the schema up to date at start; refuses a newer or edited schema. */
export { migrate } from './migrate.js';
/** Every schema step, oldest first (tests migrate to an older version with a slice of it). */
export { MIGRATIONS, type Migration } from './migrations/index.js';
/** Seals values (source credentials at rest, admin sessions) under keys derived per purpose, with key ids for SECRETS_KEY rotation. */
export { createSecretBox } from './secret-box.js';
/** Tenants and what they own, written transactionally with audit, versions and a change signal. */
export { createControlPlaneStore, CONTROL_PLANE_CHANNEL } from './control-plane-store.js';
/** The store's interface and the JSON document type its entities carry. */
export type { ControlPlaneStore, Document } from './control-plane-store.js';
/** A rule checked by a write inside its transaction, and the reads it checks the tenant with. */
export type { ControlPlaneReads, WriteCheck } from './write-check.js';
/** Who made a change, recorded in the audit log (every write takes one). */
export type { WriteContext } from './write-context.js';
/** Applies a declarative state (the bootstrap file) idempotently: only what differs is written. */
export { applyDeclaredState, type ApplyReport, type DeclaredTenant } from './apply-declared-state.js';
/** Why a write was refused (not_found, precondition_failed, conflict); nothing changed. */
export { StoreError, type StoreErrorCode } from './store-error.js';
/** One audit event and the filters and paging of a tenant's audit log. */
export { AUDIT_ACTIONS } from './audit-log.js';
export type { AuditAction, AuditEvent, AuditQuery } from './audit-log.js';
/** What tenants own and how each is stored. */
export type { StoredEntity, StoredTenant, TenantEntityKind, WriteOptions } from './control-plane-store.js';
/** The whole control plane as one JSON document: export, import (move to Postgres), backup and restore. */
export {
  exportControlPlane,
  importControlPlane,
  resealing,
  ArchiveError,
  ARCHIVE_FORMAT,
  type ControlPlaneArchive,
  type ImportReport,
  type SealedCell,
} from './control-plane-archive.js';
/** Who last wrote an entity: operators' entries are outside the egress policy, tenant admins' are held to it. */
export type { EntityWriter } from './control-plane-store.js';
/** Admin browser sessions recorded server-side: sign-out, binding removal and suspension end them on every replica. */
export { createAdminSessionRows, type AdminSessionRecord, type AdminSessionRows } from './admin-session-rows.js';
export {
  createOperatorSessionRows,
  type OperatorSessionRecord,
  type OperatorSessionRows,
} from './operator-session-rows.js';
/** The typed tenant model: who may set each field of a tenant (operator or tenant admin) and which are credentials. */
export {
  AUTHORIZATION_SERVER_DEMO,
  AUTHORIZATION_SERVER_SECRET,
  fieldRule,
  fieldsSet,
  operatorFieldSet,
  SETTINGS_FIELDS,
  type FieldRule,
  type FieldSetter,
  type SetField,
  type TenantPart,
} from './tenant-model.js';
/** A whole tenant as stored, and reading it through the store or a write's transaction. */
export {
  readStoredTenant,
  type StoredAuthorizationServerPart,
  type StoredPart,
  type StoredSourcePart,
  type StoredTenantModel,
} from './stored-tenant.js';
/** The one way from a stored tenant to what is served, and a source's credentials merged in by its type's model. */
export {
  credentialsOf,
  servedAuthorizationServerEntry,
  servedSourceEntry,
  servedTenantEntry,
  setPath,
} from './served-tenant.js';
/** The bootstrap file's importer: a file's tenant as the model's parts, and as a model without a store. */
export { declaredTenantFromEntry, storedTenantOfDeclared } from './bootstrap-import.js';
/** The admin API's importers: a tenant's settings and one entity, checked by the model. */
export {
  checkEntityBody,
  importEntity,
  importSettings,
  refuseEnvReferences,
  type EntityWriteInput,
} from './admin-import.js';
/** A source write checked by its type's model (credentials only under `secrets`, operator-only values). */
export { importSource, type ImportedSource, type SourceImportContext } from './source-import.js';
/** The authorization server settings' write: its upstream client secret sealed apart, kept only where it was sent. */
export { importAuthorizationServer } from './authorization-server-import.js';
/** The check of the tenant a write leaves, as served, inside the write's transaction. */
export {
  checkTenantWrite,
  type TenantWriteCheckContext,
  type TenantWriteTarget,
  type ValidateTenant,
} from './tenant-write-check.js';
/** Why the model refused a write, with the offending fields; nothing was stored. */
export { TenantWriteRefusal, type TenantFieldError, type TenantWriteRefusalType } from './tenant-write-refusal.js';
/** The writer a write's context records: only a tenant admin's writes are a tenant admin's. */
export { writerOf } from './entity-rows.js';
/** The one name of a tenant's authorization server settings (a singleton entity). */
export { AUTHORIZATION_SERVER_NAME } from './entity-rows.js';
/** An audited action outside the control plane's rows (a revoked grant at the tenant's authorization server). */
export type { RecordedEvent } from './control-plane-store.js';
/** What a write's `prepare` stores: the importer's document and secrets. */
export type { EntityWriteOptions, PreparedEntity } from './entity-rows.js';

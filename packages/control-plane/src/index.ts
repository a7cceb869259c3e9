/** The SQL surface shared by both engines. */
export type { ListenHandlers, SqlDatabase, SqlExecutor, SqlRows } from './sql-database.js';
/** The store on a Postgres server (DATABASE_URL). */
export { createPostgresDatabase } from './postgres-database.js';
export type { PostgresDatabaseOptions } from './postgres-database.js';
/** The embedded store (PGlite under DATA_DIR), the `npm start` default. */
export { createPgliteDatabase } from './pglite-database.js';
export type { PgliteDatabaseOptions } from './pglite-database.js';
/** Brings the schema up to date at start; refuses a newer or edited schema. */
export { migrate, MigrationError } from './migrate.js';
export type { MigrationReport } from './migrate.js';
/** Seals source credentials at rest, with key ids for SECRETS_KEY rotation. */
export { createSecretBox, SealedSecretError } from './secret-box.js';
export type { SecretBox } from './secret-box.js';
/** Tenants and what they own, written transactionally with audit, versions and a change signal. */
export { createControlPlaneStore, CONTROL_PLANE_CHANNEL } from './control-plane-store.js';
export type {
  ControlPlaneStore,
  ControlPlaneStoreOptions,
  Document,
  EntityWriteOptions,
  StoredEntity,
  StoredTenant,
  TenantChange,
  TenantEntityKind,
  WriteOptions,
} from './control-plane-store.js';
/** Why a write was refused: not_found (404), precondition_failed (412), conflict (409). */
export { StoreError } from './store-error.js';
export type { StoreErrorCode } from './store-error.js';
/** Who made a change, recorded in the audit log. */
export type { Actor, WriteContext } from './write-context.js';
/** Audit events as the admin API pages them. */
export type { AuditEvent, AuditQuery } from './audit-log.js';
/** Applies a declarative state (the bootstrap file) idempotently: only what differs is written. */
export { applyDeclaredState } from './apply-declared-state.js';
export type { ApplyReport, DeclaredTenant } from './apply-declared-state.js';

import type { EntityRows } from './entity-rows.js';
import type { SqlExecutor } from './sql-database.js';
import type { TenantRows } from './tenant-rows.js';
import type { WriteOptions } from './write-preconditions.js';

/**
 * The control plane's reads, as the store answers them or as one write's
 * transaction sees them (that write included, nothing uncommitted of anyone
 * else's).
 */
export type ControlPlaneReads = Pick<TenantRows, 'getTenant'> &
  Pick<EntityRows, 'listEntities' | 'getEntity' | 'openSourceSecrets' | 'openAuthorizationServerSecrets'>;

/**
 * A rule across what a tenant holds (a grant names a source, the sign-in
 * names an issuer), checked by the write itself: after the tenant's row is
 * locked and the change made, reading through the write's transaction, so
 * that the tenant it sees is the one that commits and no other writer of the
 * tenant can change it in between. Throwing rolls the write back and the
 * error reaches the caller as thrown.
 */
export type WriteCheck = (reads: ControlPlaneReads) => Promise<void>;

/** A write's preconditions and the check of the tenant it leaves. */
export interface CheckedWriteOptions extends WriteOptions {
  readonly check?: WriteCheck;
}

/** Reads bound to one transaction (or to the database, outside any). */
export type ReadsIn = (executor: SqlExecutor) => ControlPlaneReads;

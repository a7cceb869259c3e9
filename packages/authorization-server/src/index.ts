// The public surface of @mcpgw/authorization-server.

/** oidc-provider's records: SQL and Redis stores, the per-tenant adapter, one bundle for the process. */
export {
  createAuthorizationServerStorage,
  type AuthorizationServerStorage,
  type AuthorizationServerStorageOptions,
} from './store/authorization-server-storage.js';
export { createAdapterFactory, type AdapterFactory } from './store/adapter-factory.js';
export { createSqlRecordStore, deleteExpiredRecords, type SqlRecordStoreOptions } from './store/sql-record-store.js';
export {
  createRedisRecordStore,
  type RedisCommands,
  type RedisRecordStoreOptions,
} from './store/redis-record-store.js';
export { revokeGrant, revokeTokensOfGrant, type RecordStores } from './store/grant-revocation.js';
export { GRANT_MEMBER_MODELS, SHORT_LIVED_MODELS, type Clock, type RecordStore } from './store/records.js';
/** Values used once, with a lifetime: the upstream sign-in's state (put, take once) and single-use keys (firstUse). */
export { createShortLivedStore, type ShortLivedStore } from './store/short-lived-store.js';
export { bindFirstUse, bindShortLivedStore, type TenantShortLivedStore } from './store/pending-state.js';
/** Deletes expired SQL records periodically, one replica at a time. */
export {
  startExpiredRecordSweep,
  type ExpiredRecordSweep,
  type ExpiredRecordSweepOptions,
} from './store/expired-record-sweep.js';
/** Per-tenant RS256 signing keys, sealed in the control plane, rotated and retired. */
export {
  createSigningKeyRows,
  generateSigningKey,
  SIGNING_ALGORITHM,
  SIGNING_KEYS_CHANNEL,
  type SigningKeyRows,
  type SigningKeySealer,
  type StoredSigningKey,
  type TenantSigningKeys,
} from './signing-keys.js';
export {
  createSigningKeys,
  startKeyRotation,
  type KeyRotationScheduleOptions,
  type SigningKeys,
  type SigningKeysOptions,
} from './key-rotation.js';
/** Mapped claims per account, for tokens issued on refresh. */
export { createAccountClaims, findAccountFrom, type AccountClaims, type AccountClaimValues } from './account-claims.js';
/** The admin API's port: connected clients, grants, revocation. */
export {
  createAuthorizationRecords,
  type AuthorizationRecords,
  type AuthorizationRecordsOptions,
  type ConnectedClient,
  type ConnectedClientKind,
  type UserGrant,
  type UserGrantFilter,
} from './authorization-records.js';
/** The clients policy's port: count, last use and expiry of one tenant's registered clients. */
export {
  createRegisteredClientRows,
  type RegisteredClientRows,
  type RegisteredClientRowsOptions,
} from './store/registered-client-rows.js';

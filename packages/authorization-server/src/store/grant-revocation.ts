import type { RecordStore } from './records.js';

/**
 * Where a tenant's records live: the long-lived ones always in SQL, the
 * short-lived ones in Redis when there is one.
 */
export interface RecordStores {
  readonly sql: RecordStore;
  readonly redis?: RecordStore | undefined;
}

/** Each distinct store once (SQL alone when there is no Redis). */
export function eachStore(stores: RecordStores): RecordStore[] {
  return stores.redis === undefined ? [stores.sql] : [stores.sql, stores.redis];
}

/** Every token and code issued under the grant, in every store (RFC 7009 section 2.1: revoking a grant revokes its tokens). */
export async function revokeTokensOfGrant(stores: RecordStores, tenantId: string, grantId: string): Promise<void> {
  await Promise.all(eachStore(stores).map((store) => store.revokeByGrantId(tenantId, grantId)));
}

/** The grant itself and everything issued under it. */
export async function revokeGrant(stores: RecordStores, tenantId: string, grantId: string): Promise<void> {
  await revokeTokensOfGrant(stores, tenantId, grantId);
  await stores.sql.destroy(tenantId, 'Grant', grantId);
}

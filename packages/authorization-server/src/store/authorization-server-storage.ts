import type { SqlDatabase } from '@mcpgw/control-plane';
import { createAccountClaims, type AccountClaims } from '../account-claims.js';
import { createAuthorizationRecords, type AuthorizationRecords } from '../authorization-records.js';
import { createAdapterFactory, type AdapterFactory } from './adapter-factory.js';
import { eachStore, type RecordStores } from './grant-revocation.js';
import type { Clock } from './records.js';
import { createRedisRecordStore, type RedisCommands } from './redis-record-store.js';
import { createRegisteredClientRows, type RegisteredClientRows } from './registered-client-rows.js';
import { createShortLivedStore, type ShortLivedStore } from './short-lived-store.js';
import { createSqlRecordStore } from './sql-record-store.js';

export interface AuthorizationServerStorageOptions {
  /** The control plane's database (migrated: schema 5 or later). */
  readonly db: SqlDatabase;
  /** The gateway's Redis command connection and key namespace, when REDIS_URL is set. */
  readonly redis?:
    | {
        readonly client: RedisCommands;
        readonly namespace?: string;
        /** How keys name a tenant (RedisRecordStoreOptions.tenantTag). */
        readonly tenantTag: (tenantId: string) => string;
        /** Each master of a cluster, to SCAN (`RedisConnection.masters()`); default the client. */
        readonly masters?: () => Pick<RedisCommands, 'scan'>[];
      }
    | undefined;
  readonly now?: Clock;
}

/** Everything the hosted authorization servers keep, for every tenant of the process. */
export interface AuthorizationServerStorage {
  readonly stores: RecordStores;
  /** The `adapter` of one tenant's Provider. */
  adapterFor(tenantId: string): AdapterFactory;
  /** Values used once: the upstream sign-in's state (`bindShortLivedStore`), assertion `jti`s (`bindFirstUse`). */
  readonly shortLived: ShortLivedStore;
  readonly accounts: AccountClaims;
  /** The admin API's port. */
  readonly records: AuthorizationRecords;
  /** The clients policy's view of one tenant's registered clients. */
  registeredClientsOf(tenantId: string): RegisteredClientRows;
  /** Deletes what Redis holds for a deleted tenant (its SQL rows go with the tenant's row). */
  forgetTenant(tenantId: string): Promise<void>;
}

export function createAuthorizationServerStorage(
  options: AuthorizationServerStorageOptions,
): AuthorizationServerStorage {
  const clock = options.now === undefined ? {} : { now: options.now };
  const stores: RecordStores = {
    sql: createSqlRecordStore({ db: options.db, ...clock }),
    redis:
      options.redis === undefined
        ? undefined
        : createRedisRecordStore({
            redis: options.redis.client,
            tenantTag: options.redis.tenantTag,
            ...(options.redis.namespace === undefined ? {} : { namespace: options.redis.namespace }),
            ...(options.redis.masters === undefined ? {} : { masters: options.redis.masters }),
            ...clock,
          }),
  };
  return {
    stores,
    adapterFor: (tenantId) => createAdapterFactory(stores, tenantId),
    shortLived: createShortLivedStore(stores),
    accounts: createAccountClaims({ db: options.db, ...clock }),
    records: createAuthorizationRecords({ db: options.db, stores, ...clock }),
    registeredClientsOf: (tenantId) => createRegisteredClientRows({ db: options.db, stores, tenantId, ...clock }),
    forgetTenant: async (tenantId) => {
      await Promise.all(eachStore(stores).map((store) => store.forgetTenant(tenantId)));
    },
  };
}

import type { AdapterPayload } from 'oidc-provider';
import type { RecordStores } from './grant-revocation.js';

/** The model name the values are kept under, beside oidc-provider's. */
const MODEL = 'UpstreamSignIn';
/** The model the used keys of {@link ShortLivedStore.firstUse} are kept under. */
const USED_MODEL = 'UsedOnce';

/**
 * State that must survive one round trip through another site and be used
 * once: the upstream sign-in's `state`, nonce and PKCE verifier (RFC 6749
 * section 10.12, RFC 7636), found again by whichever replica the upstream's
 * redirect reaches. In Redis when there is one, else in SQL.
 */
export interface ShortLivedStore {
  /** Keeps `value` under `key` for `ttlSeconds`; replaces what was there. */
  put(tenantId: string, key: string, value: Record<string, unknown>, ttlSeconds: number): Promise<void>;
  /** Returns the value and deletes it, to exactly one caller across replicas; undefined once taken or expired. */
  take(tenantId: string, key: string): Promise<Record<string, unknown> | undefined>;
  /**
   * True the first time `key` is seen within `ttlSeconds` (kept at least that
   * long), on whichever replica: the single use of an assertion's `jti`.
   */
  firstUse(tenantId: string, key: string, ttlSeconds: number): Promise<boolean>;
}

export function createShortLivedStore(stores: RecordStores): ShortLivedStore {
  const store = stores.redis ?? stores.sql;
  return {
    async put(tenantId, key, value, ttlSeconds) {
      if (!(Number.isFinite(ttlSeconds) && ttlSeconds > 0)) {
        throw new TypeError(`a short-lived value needs a positive lifetime in seconds, got ${ttlSeconds}`);
      }
      // Wrapped, so that no field of the value (a `uid`, a `consumed`) is read as a record's own.
      await store.upsert(tenantId, MODEL, key, { value } as AdapterPayload, ttlSeconds);
    },
    async take(tenantId, key) {
      const taken = (await store.take(tenantId, MODEL, key)) as { value?: Record<string, unknown> } | undefined;
      return taken?.value;
    },
    async firstUse(tenantId, key, ttlSeconds) {
      if (!(Number.isFinite(ttlSeconds) && ttlSeconds > 0)) {
        throw new TypeError(`a single-use key needs a positive lifetime in seconds, got ${ttlSeconds}`);
      }
      return store.insertIfAbsent(tenantId, USED_MODEL, key, {}, ttlSeconds);
    },
  };
}

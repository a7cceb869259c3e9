import type { ShortLivedStore } from './short-lived-store.js';

/** A {@link ShortLivedStore} bound to one tenant and one value shape (e.g. the upstream module's pending sign-in). */
export interface TenantShortLivedStore<T> {
  put(key: string, value: T, ttlSeconds: number): Promise<void>;
  take(key: string): Promise<T | undefined>;
}

/**
 * Binds the store to a tenant; `parse` checks what comes back (a store holds
 * bytes: a value of another shape is no value).
 */
export function bindShortLivedStore<T extends object>(
  store: ShortLivedStore,
  tenantId: string,
  parse: (value: unknown) => T | undefined,
): TenantShortLivedStore<T> {
  if (tenantId === '') throw new TypeError('a short-lived store is bound to a tenant');
  return {
    put: (key, value, ttlSeconds) => store.put(tenantId, key, { ...value } as Record<string, unknown>, ttlSeconds),
    async take(key) {
      const value = await store.take(tenantId, key);
      return value === undefined ? undefined : parse(value);
    },
  };
}

/** {@link ShortLivedStore.firstUse} bound to one tenant (the enterprise module's assertion replay store). */
export function bindFirstUse(
  store: ShortLivedStore,
  tenantId: string,
): { firstUse(key: string, ttlSeconds: number): Promise<boolean> } {
  if (tenantId === '') throw new TypeError('a single-use store is bound to a tenant');
  return { firstUse: (key, ttlSeconds) => store.firstUse(tenantId, key, ttlSeconds) };
}

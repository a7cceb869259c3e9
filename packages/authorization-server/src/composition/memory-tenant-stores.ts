import type { TenantModuleStores } from './tenant-module-stores.js';

/**
 * The modules' stores in this process's memory: one replica only, and a
 * restart forgets every account, consent and pending sign-in. The stand-in
 * for a gateway without the control plane's store, and for tests of one
 * server; expired values are dropped when read.
 */
export function createMemoryTenantStores(now: () => number = Date.now): TenantModuleStores {
  const accounts = new Map<string, Record<string, unknown>>();
  const shortLived = new Map<string, { value: unknown; expiresAt: number }>();
  const consents = new Map<string, string>();
  const key = (...parts: string[]) => JSON.stringify(parts);
  const live = (name: string) => {
    const entry = shortLived.get(name);
    if (entry !== undefined && entry.expiresAt <= now()) shortLived.delete(name);
    return shortLived.get(name);
  };
  return {
    accounts: {
      async put(tenantId, accountId, record) {
        accounts.set(key(tenantId, accountId), structuredClone(record));
      },
      async get(tenantId, accountId) {
        const record = accounts.get(key(tenantId, accountId));
        return record === undefined ? undefined : structuredClone(record);
      },
    },
    pendingSignIns: (tenantId) => ({
      async put(state, value, ttlSeconds) {
        shortLived.set(key(tenantId, 'sign-in', state), { value: { ...value }, expiresAt: now() + ttlSeconds * 1000 });
      },
      async take(state) {
        const name = key(tenantId, 'sign-in', state);
        const entry = live(name);
        shortLived.delete(name);
        return entry?.value as never;
      },
    }),
    consentMemory: (tenantId) => ({
      async find(accountId, clientId) {
        return consents.get(key(tenantId, accountId, clientId));
      },
      async remember(accountId, clientId, grantId) {
        consents.set(key(tenantId, accountId, clientId), grantId);
      },
    }),
    assertionReplay: (tenantId) => ({
      async firstUse(replayKey, ttlSeconds) {
        const name = key(tenantId, 'used', replayKey);
        if (live(name) !== undefined) return false;
        shortLived.set(name, { value: true, expiresAt: now() + ttlSeconds * 1000 });
        return true;
      },
    }),
    // The memory adapter bounds and forgets registered clients itself.
    registeredClients: () => ({
      count: async () => 0,
      touch: async () => undefined,
      deleteUnusedSince: async () => 0,
    }),
  };
}

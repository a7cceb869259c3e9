import { createHash } from 'node:crypto';
import type { AuthorizationServerStorage } from '../store/authorization-server-storage.js';
import { bindFirstUse, bindShortLivedStore } from '../store/pending-state.js';
import { pendingSignInOf } from '../upstream/pending-sign-in-store.js';
import type { TenantModuleStores } from './tenant-module-stores.js';

/** Where remembered consents are kept, beside oidc-provider's models (never one of them). */
const CONSENT_MODEL = 'ConsentMemory';

/**
 * A remembered consent outlives no grant it names: grants last at most the
 * longest refresh chain (`tokens.refreshTokenDays`, at most 90), and the
 * pages check the Grant itself on every use anyway.
 */
const CONSENT_SECONDS = 90 * 24 * 3600;

/**
 * The modules' stores over the control plane's store (every replica sees
 * the same): account claims in SQL, pending sign-ins and assertion `jti`s
 * in the short-lived store (Redis when there is one), remembered consents
 * as SQL records of their own, registered clients through their rows.
 */
export function storedTenantStores(storage: AuthorizationServerStorage): TenantModuleStores {
  const consentId = (accountId: string, clientId: string) =>
    createHash('sha256')
      .update(JSON.stringify([accountId, clientId]))
      .digest('base64url');
  return {
    accounts: storage.accounts,
    pendingSignIns: (tenantId) => bindShortLivedStore(storage.shortLived, tenantId, pendingSignInOf),
    assertionReplay: (tenantId) => bindFirstUse(storage.shortLived, tenantId),
    registeredClients: (tenantId) => storage.registeredClientsOf(tenantId),
    consentMemory: (tenantId) => ({
      async find(accountId, clientId) {
        const record = await storage.stores.sql.find(tenantId, CONSENT_MODEL, consentId(accountId, clientId));
        return typeof record?.consentedGrant === 'string' ? record.consentedGrant : undefined;
      },
      async remember(accountId, clientId, grantId) {
        // Not under `grantId`: that field makes a record a member of the grant's, which this one is not.
        await storage.stores.sql.upsert(
          tenantId,
          CONSENT_MODEL,
          consentId(accountId, clientId),
          { consentedGrant: grantId },
          CONSENT_SECONDS,
        );
      },
    }),
  };
}

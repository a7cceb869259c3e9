import type { RegisteredClientStore } from '../clients/registered-client-store.js';
import type { AssertionReplayStore } from '../enterprise/assertion-replay.js';
import type { ConsentMemory } from '../interactions/consent-memory.js';
import type { PendingSignInStore } from '../upstream/pending-sign-in-store.js';
import type { AccountClaimsStore } from './account-records.js';

/**
 * What the modules of every tenant's hosted server keep, shared by every
 * replica (the store: control plane SQL, Redis for what is short-lived).
 * Each per-tenant view is bound to its tenant.
 */
export interface TenantModuleStores {
  readonly accounts: AccountClaimsStore;
  /** The upstream sign-in's `state`, PKCE verifier and nonce between its start and its callback. */
  pendingSignIns(tenantId: string): PendingSignInStore;
  /** The consent each account gave each client (the pages ask again only for more). */
  consentMemory(tenantId: string): ConsentMemory;
  /** The `jti`s of identity assertions already exchanged. */
  assertionReplay(tenantId: string): AssertionReplayStore;
  /** The dynamically registered clients, for the registration cap and expiry. */
  registeredClients(tenantId: string): RegisteredClientStore;
}

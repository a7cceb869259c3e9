import type { Adapter, AdapterPayload } from 'oidc-provider';
import { errors } from '../oidc-provider-module.js';
import { revokeGrant, revokeTokensOfGrant, type RecordStores } from './grant-revocation.js';
import { SHORT_LIVED_MODELS, type RecordStore } from './records.js';

/** What oidc-provider's `adapter` configuration takes: one adapter per model name. */
export type AdapterFactory = (model: string) => Adapter;

/**
 * The error a lost single-use race answers with: the same OAuth error
 * oidc-provider gives a code or refresh token it already knows to be used
 * (`invalid_grant`, RFC 6749 section 5.2), and for a pushed request
 * `invalid_request_uri` (RFC 9126 section 2.2, used once).
 */
function alreadyConsumed(model: string): Error {
  switch (model) {
    case 'PushedAuthorizationRequest':
      return new errors.InvalidRequestUri('request_uri is invalid, expired, or was already used');
    case 'RefreshToken':
      return new errors.InvalidGrant('refresh token already used');
    case 'AuthorizationCode':
      return new errors.InvalidGrant('authorization code already consumed');
    default:
      return new errors.InvalidGrant(`${model} already consumed`);
  }
}

/**
 * The adapter of one model of one tenant. oidc-provider checks `consumed`
 * on what it found and then calls `consume`; two replicas redeeming one code
 * at once would both pass that check, so `consume` here is the atomic step:
 * the call that loses (the record was consumed meanwhile, or is gone) throws
 * instead of letting a second redemption through, and, as oidc-provider does
 * for a code it sees reused (RFC 6749 section 4.1.2; OAuth 2.1 section 4.3.1
 * for a refresh token), revokes the grant and everything issued under it.
 */
function modelAdapter(store: RecordStore, stores: RecordStores, tenantId: string, model: string): Adapter {
  return {
    upsert: (id: string, payload: AdapterPayload, expiresIn?: number) =>
      store.upsert(tenantId, model, id, payload, expiresIn),
    find: (id: string) => store.find(tenantId, model, id),
    findByUid: (uid: string) => store.findByUid(tenantId, model, uid),
    findByUserCode: (userCode: string) => store.findByUserCode(tenantId, model, userCode),
    async consume(id: string) {
      if (await store.consume(tenantId, model, id)) return;
      const record = await store.find(tenantId, model, id);
      if (typeof record?.grantId === 'string') await revokeGrant(stores, tenantId, record.grantId);
      throw alreadyConsumed(model);
    },
    destroy: (id: string) => store.destroy(tenantId, model, id),
    // Like oidc-provider's own adapter, whichever model is asked: every record of the grant, in both stores.
    revokeByGrantId: (grantId: string) => revokeTokensOfGrant(stores, tenantId, grantId),
  };
}

/**
 * The `adapter` of one tenant's Provider: short-lived models in Redis when
 * there is one, everything else (and everything without Redis) in SQL.
 */
export function createAdapterFactory(stores: RecordStores, tenantId: string): AdapterFactory {
  if (tenantId === '') throw new TypeError('an adapter factory needs a tenant');
  const adapters = new Map<string, Adapter>();
  return (model) => {
    let adapter = adapters.get(model);
    if (adapter === undefined) {
      const store = SHORT_LIVED_MODELS.has(model) && stores.redis !== undefined ? stores.redis : stores.sql;
      adapter = modelAdapter(store, stores, tenantId, model);
      adapters.set(model, adapter);
    }
    return adapter;
  };
}

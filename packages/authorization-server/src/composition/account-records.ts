import type { Logger } from '@mcpgw/core';
import type { Account, FindAccount } from 'oidc-provider';

/**
 * Where the mapped claims of each account are kept, per tenant (the store's
 * account claims): written at every sign-in and identity assertion, read on
 * every token issue, refreshes included.
 */
export interface AccountClaimsStore {
  put(tenantId: string, accountId: string, record: Record<string, unknown>): Promise<void>;
  get(tenantId: string, accountId: string): Promise<Record<string, unknown> | undefined>;
}

/**
 * One stored account: the issuer that vouched for it (the tenant's upstream,
 * or an enterprise identity provider that issued an assertion) beside its
 * mapped claims. The issuer is kept because an account id is the upstream's
 * `sub`, unique only within its issuer (OpenID Connect Core 1.0 section 2):
 * after a tenant switches its upstream, the same `sub` at the new one is
 * somebody else.
 */
export interface AccountRecord {
  readonly upstreamIssuer: string;
  readonly claims: Readonly<Record<string, unknown>>;
}

export function accountRecordOf(value: Record<string, unknown> | undefined): AccountRecord | undefined {
  if (value === undefined) return undefined;
  const { upstreamIssuer, claims } = value;
  if (typeof upstreamIssuer !== 'string' || typeof claims !== 'object' || claims === null || Array.isArray(claims)) {
    return undefined;
  }
  return { upstreamIssuer, claims: claims as Record<string, unknown> };
}

/** Stores the account's mapped claims under the issuer that vouched for them. */
export function rememberAccount(
  store: AccountClaimsStore,
  tenantId: string,
  account: { accountId: string; upstreamIssuer: string; claims: Readonly<Record<string, unknown>> },
): Promise<void> {
  const record: AccountRecord = { upstreamIssuer: account.upstreamIssuer, claims: { ...account.claims } };
  return store.put(tenantId, account.accountId, { ...record });
}

/**
 * oidc-provider's `findAccount` over the stored accounts of one tenant: an
 * account is found only when it was recorded under one of `issuers` (the
 * upstream of the current settings, and the enterprise assertion issuers),
 * so a refresh token of an account signed in at a former upstream stops
 * working (`invalid_grant`) instead of issuing tokens for a stranger's
 * claims. `sub` is always the account id.
 */
export function findStoredAccount(
  store: AccountClaimsStore,
  tenantId: string,
  issuers: readonly string[],
  logger: Logger,
): FindAccount {
  const trusted = new Set(issuers);
  return async (_ctx, accountId): Promise<Account | undefined> => {
    const record = accountRecordOf(await store.get(tenantId, accountId));
    if (record === undefined) return undefined;
    if (!trusted.has(record.upstreamIssuer)) {
      logger.info(
        { upstreamIssuer: record.upstreamIssuer },
        'authorization server: an account recorded under an issuer this tenant no longer trusts was refused',
      );
      return undefined;
    }
    return { accountId, claims: () => ({ ...record.claims, sub: accountId }) };
  };
}

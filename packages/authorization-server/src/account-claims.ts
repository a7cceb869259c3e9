import type { SqlDatabase } from '@mcpgw/control-plane';
import type { FindAccount } from 'oidc-provider';
import { systemClock, type Clock } from './store/records.js';

/** Claims of an account, as mapped from its upstream sign-in (JSON values only). */
export type AccountClaimValues = Record<string, unknown>;

/**
 * The mapped claims of each account, kept per (tenant, account) so that
 * `findAccount` and the tokens' extra claims have them on a refresh too, long
 * after the sign-in that produced them. A new sign-in replaces them.
 */
export interface AccountClaims {
  put(tenantId: string, accountId: string, claims: AccountClaimValues): Promise<void>;
  /** Undefined for an account this tenant never signed in. */
  get(tenantId: string, accountId: string): Promise<AccountClaimValues | undefined>;
  /** Forgets the account; true when it was known. */
  delete(tenantId: string, accountId: string): Promise<boolean>;
}

export interface AccountClaimsOptions {
  readonly db: SqlDatabase;
  readonly now?: Clock;
}

export function createAccountClaims(options: AccountClaimsOptions): AccountClaims {
  const { db } = options;
  const now = options.now ?? systemClock;
  return {
    async put(tenantId, accountId, claims) {
      if (tenantId === '' || accountId === '') throw new TypeError('account claims need a tenant and an account id');
      if (claims === null || typeof claims !== 'object' || Array.isArray(claims)) {
        throw new TypeError('account claims are a JSON object');
      }
      await db.query(
        `INSERT INTO authorization_server_accounts (tenant_id, account_id, claims, updated_at)
         VALUES ($1, $2, $3::jsonb, $4::timestamptz)
         ON CONFLICT (tenant_id, account_id) DO UPDATE SET claims = EXCLUDED.claims, updated_at = EXCLUDED.updated_at`,
        [tenantId, accountId, JSON.stringify(claims), new Date(now()).toISOString()],
      );
    },
    async get(tenantId, accountId) {
      const { rows } = await db.query<{ claims: AccountClaimValues }>(
        'SELECT claims FROM authorization_server_accounts WHERE tenant_id = $1 AND account_id = $2',
        [tenantId, accountId],
      );
      return rows[0]?.claims;
    },
    async delete(tenantId, accountId) {
      const { affectedRows } = await db.query(
        'DELETE FROM authorization_server_accounts WHERE tenant_id = $1 AND account_id = $2',
        [tenantId, accountId],
      );
      return affectedRows === 1;
    },
  };
}

/**
 * oidc-provider's `findAccount` for one tenant over the stored claims: an
 * account this tenant never signed in (or has forgotten) is not found, so a
 * refresh for it fails (`invalid_grant`) rather than issuing tokens without
 * its claims. `sub` is always the account id, whatever the mapping holds.
 */
export function findAccountFrom(accounts: AccountClaims, tenantId: string): FindAccount {
  return async (_ctx, sub) => {
    const claims = await accounts.get(tenantId, sub);
    if (claims === undefined) return undefined;
    return { accountId: sub, claims: () => ({ ...claims, sub }) };
  };
}

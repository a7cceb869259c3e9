import type { ClaimMapping } from '@mcpgw/config';
import type { AccessToken, ClientCredentials, FindAccount, KoaContextWithOIDC } from 'oidc-provider';

/** The user claims every access token carries when the account has them (grants match on `groups`). */
const USER_CLAIMS = ['email', 'name', 'groups'] as const;

/**
 * oidc-provider's `extraTokenClaims`: the signed-in user's mapped claims
 * (`email`, `name`, `groups` and the tenant's `claims.extra`), read through
 * `findAccount` on every issue, so a token renewed by a refresh token carries
 * the account's current claims. RFC 9068 section 2.2.3.1: identity claims
 * "MAY" appear in a JWT access token; oidc-provider never lets them replace
 * the registered ones (`sub`, `aud`, `scope`, ...). A token without an account
 * (client credentials) gets none.
 */
export function accessTokenClaims(
  findAccount: FindAccount,
  mapping: ClaimMapping,
): (ctx: KoaContextWithOIDC, token: AccessToken | ClientCredentials) => Promise<Record<string, unknown> | undefined> {
  const names = [...new Set([...USER_CLAIMS, ...Object.keys(mapping.extra)])];
  return async (ctx, token) => {
    const accountId = 'accountId' in token ? token.accountId : undefined;
    if (typeof accountId !== 'string') return undefined;
    const account = await findAccount(ctx, accountId, token as AccessToken);
    if (account === undefined) return undefined;
    const claims = await account.claims('access_token', token.scope ?? '', {}, []);
    const picked: Record<string, unknown> = {};
    for (const name of names) {
      if (claims[name] !== undefined && claims[name] !== null) picked[name] = claims[name];
    }
    return picked;
  };
}

import type { JsonWebKey } from 'node:crypto';
import type { SigningKeys } from '@mcpgw/authorization-server';
import { authorizationServerIssuer } from '@mcpgw/authorization-server';
import { createIdentityTokenMinter, type MintIdentityToken, type TenantSigningKey } from '@mcpgw/source-s3';

export interface TenantIdentityTokensOptions {
  /**
   * The tenants' signing keys (authorization-server-store.ts). Read when a
   * token is minted, not when the minter is made: the registry that carries
   * the minter is made before the store is opened.
   */
  readonly signingKeys: () => SigningKeys | undefined;
  /** The canonical base URL (publicBaseUrls' first): the one the tenant's issuer is registered under. */
  readonly baseUrl: string;
}

/**
 * The identity tokens S3 sources with `callerIdentity` present to STS
 * (packages/source-s3 README, "Caller identity"): signed with the key the
 * tenant's hosted authorization server signs with, so they verify against
 * the JWKS it publishes at `${base}/t/{tenant}/oauth/jwks`, and issued by
 * that server's issuer (docs/adr/0011). A tenant without keys yet gets them
 * here, as it would on its authorization server's first use.
 */
export function createTenantIdentityTokens(options: TenantIdentityTokensOptions): MintIdentityToken {
  return createIdentityTokenMinter({
    issuer: (tenantId) => authorizationServerIssuer(options.baseUrl, tenantId),
    async signingKey(tenantId): Promise<TenantSigningKey> {
      const keys = options.signingKeys();
      if (keys === undefined) {
        throw new Error('this gateway has no store of tenant signing keys to sign identity tokens with');
      }
      return currentSigningKey(tenantId, (await keys.signingKeysOf(tenantId)).keys);
    },
  });
}

/**
 * The key that signs: the first of the tenant's keys, which signingKeysOf
 * lists before the retired ones. A retired key is still published for a
 * while but marked `key_ops: ["verify"]` (RFC 7517 section 4.3), and a token
 * signed with it now would outlive its publication.
 */
function currentSigningKey(
  tenantId: string,
  keys: ReadonlyArray<{ kid?: string; key_ops?: string[] }>,
): TenantSigningKey {
  const [first] = keys;
  if (
    first === undefined ||
    first.kid === undefined ||
    (first.key_ops !== undefined && !first.key_ops.includes('sign'))
  ) {
    throw new Error(`tenant '${tenantId}' has no signing key that signs`);
  }
  return { privateJwk: first as JsonWebKey, kid: first.kid };
}

import type { JsonWebKey } from 'node:crypto';
import type { JWK } from 'jose';
import { authorizationServerIssuer } from '@mcpgw/authorization-server';
import { createIdentityTokenMinter, type MintIdentityToken, type TenantSigningKey } from '@mcpgw/source-s3';

export interface TenantIdentityTokensOptions {
  /**
   * The tenant's private keys, the signing key first, as its hosted
   * authorization server signs with and publishes them (`app.tenantSigningKeysOf`,
   * plugins/authorization-server.ts); undefined while nothing provides them.
   * Read when a token is minted, not when the minter is made: the registry
   * that carries the minter is made before the store is opened.
   */
  readonly signingKeysOf: () => ((tenantId: string) => Promise<readonly JWK[]>) | undefined;
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
      const keysOf = options.signingKeysOf();
      if (keysOf === undefined) {
        throw new Error('this gateway has no tenant signing keys to sign identity tokens with');
      }
      return currentSigningKey(tenantId, await keysOf(tenantId));
    },
  });
}

/**
 * The key that signs: the first of the tenant's keys, which signingKeysOf
 * lists before the retired ones. A retired key is still published for a
 * while but marked `key_ops: ["verify"]` (RFC 7517 section 4.3), and a token
 * signed with it now would outlive its publication.
 */
function currentSigningKey(tenantId: string, keys: readonly JWK[]): TenantSigningKey {
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

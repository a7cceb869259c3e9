import { createPrivateKey, randomUUID, sign, type JsonWebKey, type KeyObject } from 'node:crypto';

/** What the gateway asserts about one caller to a backend's token service. */
export interface IdentityTokenRequest {
  readonly tenantId: string;
  /** The token's `sub`, as the caller identity composes it (`tenant:{id}:{subject}`). */
  readonly subject: string;
  /** Further claims (never a registered one: `iss`, `sub`, `aud`, `exp`, `nbf`, `iat`, `jti`). */
  readonly claims: Readonly<Record<string, unknown>>;
  readonly audience: string;
}

/**
 * The port through which an S3 source gets a caller's identity token: a
 * short-lived JWT the gateway signs with the tenant's own keys, whose JWKS
 * the tenant's authorization server publishes. Never the caller's own token.
 */
export type MintIdentityToken = (request: IdentityTokenRequest) => Promise<string>;

/** A tenant's current signing key: a private JWK (RSA, or EC on P-256 or P-384) and the `kid` its JWKS lists it by. */
export interface TenantSigningKey {
  readonly privateJwk: JsonWebKey;
  readonly kid: string;
}

export interface IdentityTokenMinterOptions {
  /** The tenant's current signing key (the tenant key store). */
  signingKey(tenantId: string): TenantSigningKey | Promise<TenantSigningKey>;
  /** The tenant's issuer, `${PUBLIC_URL}/t/{tenant}/oauth`: what an IAM OIDC provider is registered for. */
  issuer(tenantId: string): string;
  /** How long a token is valid. Default 300 s: STS reads it once, right away. */
  lifetimeSeconds?: number;
  /** Milliseconds since the epoch. Default `Date.now`. */
  now?: () => number;
}

const REGISTERED = new Set(['iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti']);

/** The JWS algorithm a key signs with (RFC 7518 section 3.1), and how node:crypto does it. */
interface Signer {
  readonly alg: 'RS256' | 'ES256' | 'ES384';
  readonly key: KeyObject;
  readonly digest: 'sha256' | 'sha384';
}

function signerOf(jwk: JsonWebKey): Signer {
  const key = createPrivateKey({ key: jwk, format: 'jwk' });
  if (key.type !== 'private') throw new Error('the signing key must be a private key');
  if (jwk.kty === 'RSA') return { alg: 'RS256', key, digest: 'sha256' };
  if (jwk.kty === 'EC' && jwk.crv === 'P-256') return { alg: 'ES256', key, digest: 'sha256' };
  if (jwk.kty === 'EC' && jwk.crv === 'P-384') return { alg: 'ES384', key, digest: 'sha384' };
  // IAM's OIDC federation verifies RSA and ECDSA signatures; nothing else is minted.
  throw new Error(`signing keys of type ${String(jwk.kty)} ${String(jwk.crv ?? '')} are not supported`.trim());
}

const base64url = (value: string | Buffer): string => Buffer.from(value).toString('base64url');

/**
 * The gateway's identity-token minter (RFC 7519): `iss` the tenant's
 * issuer, `aud` as asked, `iat`/`exp` a few minutes apart, a fresh `jti`,
 * signed with the tenant's key and naming it by `kid` (RFC 7515 section
 * 4.1.4) so the backend picks it from the tenant's JWKS.
 */
export function createIdentityTokenMinter(options: IdentityTokenMinterOptions): MintIdentityToken {
  const lifetimeSeconds = options.lifetimeSeconds ?? 300;
  const now = options.now ?? Date.now;
  const signers = new WeakMap<JsonWebKey, Signer>();
  return async (request) => {
    for (const name of Object.keys(request.claims)) {
      if (REGISTERED.has(name)) throw new Error(`an identity token's "${name}" is the minter's to set`);
    }
    const { privateJwk, kid } = await options.signingKey(request.tenantId);
    let signer = signers.get(privateJwk);
    if (signer === undefined) {
      signer = signerOf(privateJwk);
      signers.set(privateJwk, signer);
    }
    const iat = Math.floor(now() / 1000);
    const header = { alg: signer.alg, typ: 'JWT', kid };
    const payload = {
      ...request.claims,
      iss: options.issuer(request.tenantId),
      sub: request.subject,
      aud: request.audience,
      iat,
      exp: iat + lifetimeSeconds,
      jti: randomUUID(),
    };
    const input = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(payload))}`;
    // ECDSA signatures are R || S in JWS (RFC 7518 section 3.4), not DER.
    const signature = sign(signer.digest, Buffer.from(input), {
      key: signer.key,
      ...(signer.alg === 'RS256' ? {} : { dsaEncoding: 'ieee-p1363' as const }),
    });
    return `${input}.${base64url(signature)}`;
  };
}

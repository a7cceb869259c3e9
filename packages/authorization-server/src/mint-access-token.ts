import { randomUUID } from 'node:crypto';
import { SignJWT, importJWK } from 'jose';
import { DEMO_SUBJECT } from './demo-account.js';
import { loadOrCreateKeystore, SIGNING_ALGORITHM } from './keystore-file.js';
import { parseIssuer } from './loopback.js';
import { normalizeResource } from './resource-indicators.js';

/** The default lifetime of a minted token: one hour, like most identity providers' default. */
export const ACCESS_TOKEN_TTL_SECONDS = 3600;

export interface MintAccessTokenInput {
  /** A loopback issuer the gateway trusts: a demo login's hosted issuer, or the local operator issuer. */
  issuer: string;
  /** The keystore file the issuer signs with; created if missing. */
  keystorePath: string;
  /** The audience: a tenant's canonical resource URI. */
  resource: string;
  /** Space-separated scopes (RFC 6749 §3.3); may be empty. */
  scope: string;
  /** Default `demo-user`. */
  subject?: string;
  /** Default `dev-token-cli`. */
  clientId?: string;
  /** Default ACCESS_TOKEN_TTL_SECONDS. */
  ttlSeconds?: number;
  /**
   * Further claims, e.g. an operator role (`{ roles: ['gateway-operator'] }`).
   * They never replace the registered claims this function sets.
   */
  claims?: Record<string, unknown>;
}

/** The client_id stamped on tokens the CLI mints. */
export const TOKEN_CLI_CLIENT_ID = 'dev-token-cli';

/**
 * Signs an access token exactly as a hosted server's token endpoint would
 * for the same grant (`npm run token`, loopback issuers only): JOSE header `typ: at+jwt`, `alg`, `kid`; claims
 * `iss`, `sub`, `aud` (the resource), `client_id`, `scope`, `iat`, `exp`,
 * `jti` (RFC 9068 §2.2). No server needs to run: the key is read from (or
 * created in) `keystorePath`.
 */
export async function mintAccessToken(input: MintAccessTokenInput): Promise<string> {
  const issuer = parseIssuer(input.issuer, true).href;
  if (normalizeResource(input.resource) === undefined) {
    throw new Error(`resource ${JSON.stringify(input.resource)} must be an absolute http(s) URI without a fragment`);
  }
  const ttl = input.ttlSeconds ?? ACCESS_TOKEN_TTL_SECONDS;
  if (!Number.isSafeInteger(ttl) || ttl <= 0) throw new Error('ttlSeconds must be a positive integer');
  const scope = input.scope
    .split(' ')
    .filter((s) => s !== '')
    .join(' ');

  const { privateJwks } = await loadOrCreateKeystore(input.keystorePath);
  const [jwk] = privateJwks.keys;
  if (jwk === undefined) throw new Error(`${input.keystorePath} holds no key`);
  const key = await importJWK(jwk, SIGNING_ALGORITHM);

  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    ...input.claims,
    client_id: input.clientId ?? TOKEN_CLI_CLIENT_ID,
    ...(scope === '' ? {} : { scope }),
  })
    .setProtectedHeader({ alg: SIGNING_ALGORITHM, typ: 'at+jwt', ...(jwk.kid === undefined ? {} : { kid: jwk.kid }) })
    .setIssuer(issuer)
    .setSubject(input.subject ?? DEMO_SUBJECT)
    .setAudience(input.resource)
    .setIssuedAt(now)
    .setExpirationTime(now + ttl)
    .setJti(randomUUID())
    .sign(key);
}

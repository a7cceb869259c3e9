import { createHmac, hkdfSync, randomBytes } from 'node:crypto';

/**
 * The one place the server secret (SECRETS_KEY) becomes keys. Every use of
 * the secret gets a key of its own, derived with HKDF-SHA256 (RFC 5869,
 * section 2: an empty salt, the purpose's own `info` label, 32 bytes), so no
 * key ever serves two purposes and a value made for one (a cursor, a sealed
 * credential, a session cookie) never opens for another.
 *
 * The labels are part of what is stored: sealed credentials in the control
 * plane, session cookies and cursors held by clients, and cache keys in Redis
 * all depend on the exact bytes, so a label never changes once released (a
 * new format takes a new label, as the cursor's `v2` did). Two derivations
 * predate the labels and are kept byte for byte for the same reason: the
 * request log's principal fingerprint (an HMAC of its label under the secret,
 * which is HKDF-Extract with the secret as salt, RFC 5869 section 2.2) and
 * the admin API's per-principal rate counters, which key by the secret itself.
 */
export interface ServerKeys {
  /** AES-256-GCM key sealing pagination cursors. */
  readonly cursor: Buffer;
  /** HMAC key naming every cache entry, body and tenant tag in Redis or in process. */
  readonly cacheKey: Buffer;
  /** AES-256-GCM keys of the admin session cookie: the first seals, each opens (rotation). */
  readonly adminSession: readonly Buffer[];
  /** HMAC key of the request log's gateway-wide principal fingerprint. */
  readonly requestLogFingerprint: Buffer;
  /** HMAC key of a caller's fingerprint within one tenant (what that tenant's admins see). */
  tenantPrincipalFingerprint(tenantId: string): Buffer;
  /** HMAC key of the admin API's per-principal rate counters (shared by replicas in Redis). */
  readonly adminPrincipalCounter: Buffer;
  /**
   * The keys signing a tenant's hosted authorization server cookies
   * (interaction and session): the first signs, each verifies (rotation), so
   * any replica continues a sign-in another began.
   */
  authorizationServerCookies(tenantId: string): readonly Buffer[];
  /**
   * The HMAC key of the CSRF tokens in a tenant's hosted authorization server
   * forms (sign-in and consent): the same on every replica, so a page served
   * by one is answered at another. Not rotated with SECRETS_KEY_PREVIOUS: a
   * form lives as long as its interaction (minutes), so a rotation costs at
   * most one resubmitted page.
   */
  authorizationServerCsrf(tenantId: string): Buffer;
  /**
   * True when SECRETS_KEY was unset and the keys come from a random secret of
   * this process: cursors, cache keys and sessions then survive neither a
   * restart nor a trip to another replica.
   */
  readonly ephemeral: boolean;
}

/** The HKDF `info` label of each purpose (never changed once released: see {@link ServerKeys}). */
const INFO = {
  cursor: 'mcpgw cursor v2 aes-256-gcm',
  cacheKey: 'mcpgw cache key v1',
  sealedCredentials: 'mcpgw control-plane sealed secrets v1',
  sealedSigningKeys: 'mcpgw authorization-server signing keys v1',
  adminSession: 'mcpgw sealed admin session v1',
  tenantPrincipalFingerprint: 'mcpgw tenant principal fingerprint v1\0',
  authorizationServerCookies: 'mcpgw authorization server cookies v1\0',
  authorizationServerCsrf: 'mcpgw authorization server csrf v1\0',
} as const;

/** The request-log fingerprint's label, HMAC'd under the secret (see {@link ServerKeys}). */
const REQUEST_LOG_FINGERPRINT_LABEL = 'mcpgw request-log principal fingerprint';

function hkdf(secret: Uint8Array, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, new Uint8Array(0), info, 32));
}

export interface ServerKeysOptions {
  /** SECRETS_KEY; unset: a random secret of this process. */
  readonly secretsKey?: string | undefined;
  /** SECRETS_KEY_PREVIOUS during a rotation: what it sealed (sessions) still opens. */
  readonly previousSecretsKey?: string | undefined;
}

/**
 * The keys of this process, from SECRETS_KEY (its UTF-8 bytes) or, when it is
 * unset, from 32 random bytes (RFC 4086 section 8) made here, once.
 */
export function createServerKeys(options: ServerKeysOptions): ServerKeys {
  const ephemeral = options.secretsKey === undefined;
  const secret = options.secretsKey === undefined ? randomBytes(32) : Buffer.from(options.secretsKey, 'utf8');
  const previous =
    options.secretsKey === undefined || options.previousSecretsKey === undefined
      ? []
      : [Buffer.from(options.previousSecretsKey, 'utf8')];
  return {
    cursor: hkdf(secret, INFO.cursor),
    cacheKey: hkdf(secret, INFO.cacheKey),
    adminSession: [secret, ...previous].map((each) => hkdf(each, INFO.adminSession)),
    requestLogFingerprint: createHmac('sha256', secret).update(REQUEST_LOG_FINGERPRINT_LABEL).digest(),
    tenantPrincipalFingerprint: (tenantId) => hkdf(secret, `${INFO.tenantPrincipalFingerprint}${tenantId}`),
    adminPrincipalCounter: Buffer.from(secret),
    authorizationServerCookies: (tenantId) =>
      [secret, ...previous].map((each) => hkdf(each, `${INFO.authorizationServerCookies}${tenantId}`)),
    authorizationServerCsrf: (tenantId) => hkdf(secret, `${INFO.authorizationServerCsrf}${tenantId}`),
    ephemeral,
  };
}

/**
 * The AES-256-GCM keys of source credentials sealed in the control plane, one
 * per root secret in the order given (the first seals, each opens). The roots
 * are SECRETS_KEY and SECRETS_KEY_PREVIOUS, or, without SECRETS_KEY, the key an
 * embedded store keeps beside its database: credentials outlive the process,
 * so they never use the random secret of {@link createServerKeys}.
 */
export function sealedCredentialKeys(rootSecrets: readonly Uint8Array[]): Buffer[] {
  return rootSecrets.map((secret) => hkdf(secret, INFO.sealedCredentials));
}

/**
 * The AES-256-GCM keys sealing the private signing keys of the tenants'
 * hosted authorization servers in the control plane, from the same roots as
 * {@link sealedCredentialKeys} (they outlive the process too) under a label
 * of their own: a sealed credential never opens as a signing key, nor the
 * reverse.
 */
export function sealedSigningKeyKeys(rootSecrets: readonly Uint8Array[]): Buffer[] {
  return rootSecrets.map((secret) => hkdf(secret, INFO.sealedSigningKeys));
}

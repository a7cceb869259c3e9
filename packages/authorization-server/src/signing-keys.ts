import { createHash } from 'node:crypto';
import type { SqlDatabase } from '@mcpgw/control-plane';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';

/** The algorithm of every tenant's signing keys (RFC 7518 section 3.3; what RFC 9068 access tokens require support for). */
export const SIGNING_ALGORITHM = 'RS256';

/**
 * Channel of the NOTIFY sent, at commit, when a tenant's keys change (payload:
 * the tenant id), so every replica rebuilds that tenant's provider.
 */
export const SIGNING_KEYS_CHANNEL = 'mcpgw_authorization_server_keys';

/** Seals the private JWKs: `createSecretBox(sealedSigningKeyKeys(rootSecrets))` (ADR 0009). */
export interface SigningKeySealer {
  seal(plaintext: string, boundTo: string): string;
  open(sealed: string, boundTo: string): string;
}

/** One stored key, with when it started and stopped signing (ms since the epoch). */
export interface StoredSigningKey {
  readonly kid: string;
  readonly publicJwk: JWK;
  readonly createdAt: number;
  /** When its successor took over; undefined for the key that signs. */
  readonly retiredAt?: number;
}

/** A tenant's keys, ready for its Provider and for the verifier of its tokens. */
export interface TenantSigningKeys {
  /**
   * Private JWKs for oidc-provider's `jwks`: the signing key first, then the
   * retired ones still published (newest first, `key_ops: ["verify"]`, so
   * they never sign again).
   */
  readonly keys: JWK[];
  /** The public parts of the same keys: the tenant's JWKS (RFC 7517 section 5). */
  readonly jwks: { keys: JWK[] };
  /** Differs whenever the set differs: rebuild the provider and the verifier when it does. */
  readonly revision: string;
}

interface KeyRow {
  kid: string;
  public_jwk: JWK;
  sealed_private_jwk: string;
  created_ms: number;
  retired_ms: number | null;
}

/** A fresh RS256 key pair as JWKs, named by its RFC 7638 thumbprint. */
export async function generateSigningKey(): Promise<{ kid: string; privateJwk: JWK; publicJwk: JWK }> {
  const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALGORITHM, {
    modulusLength: 2048,
    extractable: true,
  });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk, 'sha256');
  const named = { kid, alg: SIGNING_ALGORITHM, use: 'sig' };
  return { kid, privateJwk: { ...(await exportJWK(privateKey)), ...named }, publicJwk: { ...publicJwk, ...named } };
}

/** What a sealed private key is bound to: copied to another tenant or key row, it no longer opens. */
const boundTo = (tenantId: string, kid: string) => `authorization-server signing key\0${tenantId}\0${kid}`;

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The control plane's table of signing keys. It stores and reads; when keys
 * are made and retired is {@link ./key-rotation.ts}.
 */
export interface SigningKeyRows {
  list(tenantId: string): Promise<StoredSigningKey[]>;
  /** Tenants that have keys. */
  tenants(): Promise<string[]>;
  /** The tenant's keys, private parts opened, for its provider. */
  load(tenantId: string): Promise<TenantSigningKeys>;
  /**
   * In `tx`: adds `key` as the signing key when the tenant has none that
   * signs; false (nothing added) when it has one, e.g. made by another
   * replica meanwhile.
   */
  insertActive(
    tx: Pick<SqlDatabase, 'query'>,
    tenantId: string,
    key: Awaited<ReturnType<typeof generateSigningKey>>,
    at: number,
  ): Promise<boolean>;
}

export function createSigningKeyRows(db: SqlDatabase, sealer: SigningKeySealer): SigningKeyRows {
  const rows = async (tenantId: string): Promise<KeyRow[]> =>
    (
      await db.query<KeyRow>(
        `SELECT kid, public_jwk, sealed_private_jwk,
                (extract(epoch FROM created_at) * 1000)::float8 AS created_ms,
                (extract(epoch FROM retired_at) * 1000)::float8 AS retired_ms
           FROM authorization_server_signing_keys WHERE tenant_id = $1
          ORDER BY retired_at DESC NULLS FIRST, created_at DESC`,
        [tenantId],
      )
    ).rows;
  return {
    async list(tenantId) {
      return (await rows(tenantId)).map((row) => ({
        kid: row.kid,
        publicJwk: row.public_jwk,
        createdAt: row.created_ms,
        ...(row.retired_ms === null ? {} : { retiredAt: row.retired_ms }),
      }));
    },
    async tenants() {
      const found = await db.query<{ tenant_id: string }>(
        'SELECT DISTINCT tenant_id FROM authorization_server_signing_keys ORDER BY tenant_id',
      );
      return found.rows.map((row) => row.tenant_id);
    },
    async load(tenantId) {
      const found = await rows(tenantId);
      const keys = found.map((row) => {
        const jwk = JSON.parse(sealer.open(row.sealed_private_jwk, boundTo(tenantId, row.kid))) as JWK;
        return row.retired_ms === null ? jwk : { ...jwk, key_ops: ['verify'] };
      });
      const jwks = found.map((row) =>
        row.retired_ms === null ? row.public_jwk : { ...row.public_jwk, key_ops: ['verify'] },
      );
      const revision = createHash('sha256')
        .update(JSON.stringify(found.map((row) => [row.kid, row.retired_ms])))
        .digest('base64url')
        .slice(0, 16);
      return { keys, jwks: { keys: jwks }, revision };
    },
    async insertActive(tx, tenantId, key, at) {
      const { affectedRows } = await tx.query(
        `INSERT INTO authorization_server_signing_keys
           (tenant_id, kid, alg, public_jwk, sealed_private_jwk, created_at)
         VALUES ($1, $2, $3, $4::jsonb, $5, $6::timestamptz)
         ON CONFLICT (tenant_id) WHERE retired_at IS NULL DO NOTHING`,
        [
          tenantId,
          key.kid,
          SIGNING_ALGORITHM,
          JSON.stringify(key.publicJwk),
          sealer.seal(JSON.stringify(key.privateJwk), boundTo(tenantId, key.kid)),
          iso(at),
        ],
      );
      return affectedRows === 1;
    },
  };
}

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

/**
 * One stored key (times in ms since the epoch). A key is first published
 * only (`signingSince` undefined), then signs, then is retired and published
 * for verifiers until what it signed has expired (see {@link ./key-rotation.ts}).
 */
export interface StoredSigningKey {
  readonly kid: string;
  readonly publicJwk: JWK;
  readonly createdAt: number;
  /** When it started signing; undefined for a successor that is published but does not sign yet. */
  readonly signingSince?: number;
  /** When its successor took over; undefined for the key that signs and for a successor. */
  readonly retiredAt?: number;
}

/** A tenant's keys, ready for its Provider and for the verifier of its tokens. */
export interface TenantSigningKeys {
  /**
   * Private JWKs for oidc-provider's `jwks`: the signing key first, then the
   * successor that will sign next, then the retired ones still published
   * (newest first); all but the first `key_ops: ["verify"]`, so only the
   * first signs.
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
  signing_ms: number | null;
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
  insertSigning(
    tx: Pick<SqlDatabase, 'query'>,
    tenantId: string,
    key: GeneratedSigningKey,
    at: number,
  ): Promise<boolean>;
  /**
   * In `tx`: adds `key` as the successor, published but not signing, when
   * the tenant has no successor yet and its signing key has signed since
   * `signingBefore` or earlier; false (nothing added) otherwise, e.g. when
   * another replica added one meanwhile.
   */
  insertSuccessor(
    tx: Pick<SqlDatabase, 'query'>,
    tenantId: string,
    key: GeneratedSigningKey,
    at: number,
    signingBefore: number,
  ): Promise<boolean>;
  /**
   * In `tx`: the successor published at `publishedBefore` or earlier signs
   * from `at`, and the key that signed until then is retired; false (nothing
   * changed) when there is no such successor, e.g. another replica promoted it.
   */
  promoteSuccessor(
    tx: Pick<SqlDatabase, 'query'>,
    tenantId: string,
    at: number,
    publishedBefore: number,
  ): Promise<boolean>;
}

type GeneratedSigningKey = Awaited<ReturnType<typeof generateSigningKey>>;

export function createSigningKeyRows(db: SqlDatabase, sealer: SigningKeySealer): SigningKeyRows {
  const rows = async (tenantId: string): Promise<KeyRow[]> =>
    (
      await db.query<KeyRow>(
        `SELECT kid, public_jwk, sealed_private_jwk,
                (extract(epoch FROM created_at) * 1000)::float8 AS created_ms,
                (extract(epoch FROM signing_since) * 1000)::float8 AS signing_ms,
                (extract(epoch FROM retired_at) * 1000)::float8 AS retired_ms
           FROM authorization_server_signing_keys WHERE tenant_id = $1
          ORDER BY (retired_at IS NULL AND signing_since IS NOT NULL) DESC,
                   retired_at DESC NULLS FIRST, created_at DESC`,
        [tenantId],
      )
    ).rows;
  return {
    async list(tenantId) {
      return (await rows(tenantId)).map((row) => ({
        kid: row.kid,
        publicJwk: row.public_jwk,
        createdAt: row.created_ms,
        ...(row.signing_ms === null ? {} : { signingSince: row.signing_ms }),
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
      const signs = (row: KeyRow) => row.retired_ms === null && row.signing_ms !== null;
      const keys = found.map((row) => {
        const jwk = JSON.parse(sealer.open(row.sealed_private_jwk, boundTo(tenantId, row.kid))) as JWK;
        return signs(row) ? jwk : { ...jwk, key_ops: ['verify'] };
      });
      const jwks = found.map((row) => (signs(row) ? row.public_jwk : { ...row.public_jwk, key_ops: ['verify'] }));
      const revision = createHash('sha256')
        .update(JSON.stringify(found.map((row) => [row.kid, row.signing_ms, row.retired_ms])))
        .digest('base64url')
        .slice(0, 16);
      return { keys, jwks: { keys: jwks }, revision };
    },
    async insertSigning(tx, tenantId, key, at) {
      const { affectedRows } = await tx.query(
        `INSERT INTO authorization_server_signing_keys
           (tenant_id, kid, alg, public_jwk, sealed_private_jwk, created_at, signing_since)
         VALUES ($1, $2, $3, $4::jsonb, $5, $6::timestamptz, $6::timestamptz)
         ON CONFLICT (tenant_id) WHERE retired_at IS NULL AND signing_since IS NOT NULL DO NOTHING`,
        [tenantId, ...sealedRow(tenantId, key), iso(at)],
      );
      return affectedRows === 1;
    },
    async insertSuccessor(tx, tenantId, key, at, signingBefore) {
      const { affectedRows } = await tx.query(
        `INSERT INTO authorization_server_signing_keys
           (tenant_id, kid, alg, public_jwk, sealed_private_jwk, created_at)
         SELECT $1, $2, $3, $4::jsonb, $5, $6::timestamptz
          WHERE EXISTS (SELECT 1 FROM authorization_server_signing_keys
                         WHERE tenant_id = $1 AND retired_at IS NULL AND signing_since <= $7::timestamptz)
         ON CONFLICT (tenant_id) WHERE signing_since IS NULL DO NOTHING`,
        [tenantId, ...sealedRow(tenantId, key), iso(at), iso(signingBefore)],
      );
      return affectedRows === 1;
    },
    async promoteSuccessor(tx, tenantId, at, publishedBefore) {
      // Locks the successor first: of two replicas promoting at once, the second waits, then finds none.
      const successor = await tx.query<{ kid: string }>(
        `SELECT kid FROM authorization_server_signing_keys
          WHERE tenant_id = $1 AND signing_since IS NULL AND created_at <= $2::timestamptz
            FOR UPDATE`,
        [tenantId, iso(publishedBefore)],
      );
      const kid = successor.rows[0]?.kid;
      if (kid === undefined) return false;
      // Retired before the successor signs: the unique index allows one key that signs.
      await tx.query(
        `UPDATE authorization_server_signing_keys SET retired_at = $2::timestamptz
          WHERE tenant_id = $1 AND retired_at IS NULL AND signing_since IS NOT NULL`,
        [tenantId, iso(at)],
      );
      const promoted = await tx.query(
        `UPDATE authorization_server_signing_keys SET signing_since = $3::timestamptz
          WHERE tenant_id = $1 AND kid = $2 AND signing_since IS NULL`,
        [tenantId, kid, iso(at)],
      );
      return promoted.affectedRows === 1;
    },
  };

  function sealedRow(tenantId: string, key: GeneratedSigningKey): [string, string, string, string] {
    return [
      key.kid,
      SIGNING_ALGORITHM,
      JSON.stringify(key.publicJwk),
      sealer.seal(JSON.stringify(key.privateJwk), boundTo(tenantId, key.kid)),
    ];
  }
}

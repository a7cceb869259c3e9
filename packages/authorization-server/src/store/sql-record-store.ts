import type { SqlDatabase } from '@mcpgw/control-plane';
import type { AdapterPayload } from 'oidc-provider';
import {
  checkRecord,
  GRANT_MEMBER_MODELS,
  systemClock,
  withoutConsumed,
  type Clock,
  type RecordStore,
} from './records.js';

/** Models whose `last_used_at` is kept (what the admin API shows as "last used"). */
const TRACKED_USE = new Set(['Client', 'Grant']);

/** A use is recorded at most this often per record: a find is not worth a write each time. */
const USE_GRANULARITY_MS = 5 * 60_000;

export interface SqlRecordStoreOptions {
  readonly db: SqlDatabase;
  /** Decides expiry and the consumed / created / used times (the database's own clock is never read). */
  readonly now?: Clock;
}

interface FoundRow {
  payload: AdapterPayload;
  consumed: number | null;
  last_used_ms: number | null;
}

const iso = (ms: number) => new Date(ms).toISOString();

const LIVE = '(expires_at IS NULL OR expires_at > $4::timestamptz)';

/**
 * oidc-provider's records in the control plane (`authorization_server_records`),
 * on Postgres or PGlite alike. Single use is one conditional UPDATE
 * (`consumed_at IS NULL`): Postgres lets exactly one of two concurrent ones
 * change the row, whichever replica runs them.
 */
export function createSqlRecordStore(options: SqlRecordStoreOptions): RecordStore {
  const { db } = options;
  const now = options.now ?? systemClock;

  const selectOne = async (where: string, values: unknown[]): Promise<AdapterPayload | undefined> => {
    const { rows } = await db.query<FoundRow & { model: string; id: string }>(
      `SELECT model, id, payload,
              extract(epoch FROM consumed_at)::float8 AS consumed,
              (extract(epoch FROM last_used_at) * 1000)::float8 AS last_used_ms
         FROM authorization_server_records
        WHERE tenant_id = $1 AND model = $2 AND ${where} AND ${LIVE}
        ORDER BY created_at DESC LIMIT 1`,
      values,
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    if (TRACKED_USE.has(row.model) && (row.last_used_ms === null || row.last_used_ms < now() - USE_GRANULARITY_MS)) {
      await db.query(
        'UPDATE authorization_server_records SET last_used_at = $4 WHERE tenant_id = $1 AND model = $2 AND id = $3',
        [values[0], row.model, row.id, iso(now())],
      );
    }
    return row.consumed === null ? row.payload : { ...row.payload, consumed: Math.floor(row.consumed) };
  };

  return {
    backend: 'sql',
    async upsert(tenantId, model, id, payload, expiresInSeconds) {
      checkRecord(tenantId, model, id, expiresInSeconds);
      const at = now();
      const { stored, consumed } = withoutConsumed(payload);
      const grantId = GRANT_MEMBER_MODELS.has(model) && typeof payload.grantId === 'string' ? payload.grantId : null;
      const uid = typeof payload.uid === 'string' ? payload.uid : null;
      await db.query(
        `INSERT INTO authorization_server_records
           (tenant_id, model, id, payload, grant_id, uid, expires_at, consumed_at, created_at, last_used_at)
         VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7::timestamptz, $8::timestamptz, $9::timestamptz, $10::timestamptz)
         ON CONFLICT (tenant_id, model, id) DO UPDATE SET
           payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id, uid = EXCLUDED.uid,
           expires_at = EXCLUDED.expires_at,
           -- Once consumed, always consumed: a later save never makes a code usable again.
           consumed_at = COALESCE(authorization_server_records.consumed_at, EXCLUDED.consumed_at)`,
        [
          tenantId,
          model,
          id,
          JSON.stringify(stored),
          grantId,
          uid,
          expiresInSeconds === undefined ? null : iso(at + expiresInSeconds * 1000),
          consumed === undefined ? null : iso(consumed * 1000),
          iso(at),
          // A client counts as used when it registers, so an unused registration expires from then on.
          model === 'Client' ? iso(at) : null,
        ],
      );
    },
    async insertIfAbsent(tenantId, model, id, payload, expiresInSeconds) {
      checkRecord(tenantId, model, id, expiresInSeconds);
      const at = now();
      // On a conflict the row is taken over only when it has expired; of two concurrent inserts the
      // second waits for the first to commit, then finds the row live and changes nothing.
      const { rows } = await db.query(
        `INSERT INTO authorization_server_records (tenant_id, model, id, payload, expires_at, created_at)
         VALUES ($1, $2, $3, $4::jsonb, $5::timestamptz, $6::timestamptz)
         ON CONFLICT (tenant_id, model, id) DO UPDATE SET
           payload = EXCLUDED.payload, expires_at = EXCLUDED.expires_at, created_at = EXCLUDED.created_at,
           consumed_at = NULL, grant_id = NULL, uid = NULL, last_used_at = NULL
         WHERE authorization_server_records.expires_at <= EXCLUDED.created_at
         RETURNING id`,
        [tenantId, model, id, JSON.stringify(payload), iso(at + expiresInSeconds * 1000), iso(at)],
      );
      return rows.length === 1;
    },
    find: (tenantId, model, id) => selectOne('id = $3', [tenantId, model, id, iso(now())]),
    findByUid: (tenantId, model, uid) => selectOne('uid = $3', [tenantId, model, uid, iso(now())]),
    findByUserCode: (tenantId, model, userCode) =>
      selectOne("payload->>'userCode' = $3", [tenantId, model, userCode, iso(now())]),
    async consume(tenantId, model, id) {
      const { affectedRows } = await db.query(
        `UPDATE authorization_server_records SET consumed_at = $4::timestamptz
          WHERE tenant_id = $1 AND model = $2 AND id = $3 AND consumed_at IS NULL AND ${LIVE}`,
        [tenantId, model, id, iso(now())],
      );
      return affectedRows === 1;
    },
    async destroy(tenantId, model, id) {
      await db.query('DELETE FROM authorization_server_records WHERE tenant_id = $1 AND model = $2 AND id = $3', [
        tenantId,
        model,
        id,
      ]);
    },
    async take(tenantId, model, id) {
      const { rows } = await db.query<{ payload: AdapterPayload }>(
        `DELETE FROM authorization_server_records
          WHERE tenant_id = $1 AND model = $2 AND id = $3 AND ${LIVE}
          RETURNING payload`,
        [tenantId, model, id, iso(now())],
      );
      return rows[0]?.payload;
    },
    async revokeByGrantId(tenantId, grantId) {
      await db.query('DELETE FROM authorization_server_records WHERE tenant_id = $1 AND grant_id = $2', [
        tenantId,
        grantId,
      ]);
    },
    async forgetTenant(tenantId) {
      await db.query('DELETE FROM authorization_server_records WHERE tenant_id = $1', [tenantId]);
    },
  };
}

/** Deletes every record of every tenant that expired by `at` (ms); resolves to how many. */
export async function deleteExpiredRecords(db: SqlDatabase, at: number): Promise<number> {
  const { affectedRows } = await db.query(
    'DELETE FROM authorization_server_records WHERE expires_at <= $1::timestamptz',
    [iso(at)],
  );
  return affectedRows;
}

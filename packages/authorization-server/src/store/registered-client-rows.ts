import type { SqlDatabase } from '@mcpgw/control-plane';
import { revokeGrant, type RecordStores } from './grant-revocation.js';
import { systemClock, type Clock } from './records.js';

/**
 * What the clients policy needs to know of one tenant's registered clients
 * (RFC 7591): how many there are, their last use, and deleting those unused
 * for long. Clients known by a Client ID Metadata Document are never stored,
 * so they are not counted here.
 */
export interface RegisteredClientRows {
  count(): Promise<number>;
  /** Moves the client's last use forward to `usedAt`; an unknown id changes nothing. */
  touch(clientId: string, usedAt: Date): Promise<void>;
  /** Deletes every registered client last used before `cutoff`, with its grants and their tokens; resolves to how many. */
  deleteUnusedSince(cutoff: Date): Promise<number>;
}

export interface RegisteredClientRowsOptions {
  readonly db: SqlDatabase;
  readonly stores: RecordStores;
  readonly tenantId: string;
  readonly now?: Clock;
}

const LIVE = '(expires_at IS NULL OR expires_at > $2::timestamptz)';

export function createRegisteredClientRows(options: RegisteredClientRowsOptions): RegisteredClientRows {
  const { db, stores, tenantId } = options;
  if (tenantId === '') throw new TypeError('registered clients belong to a tenant');
  const now = () => new Date((options.now ?? systemClock)()).toISOString();
  return {
    async count() {
      const { rows } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM authorization_server_records
          WHERE tenant_id = $1 AND model = 'Client' AND ${LIVE}`,
        [tenantId, now()],
      );
      return rows[0]?.n ?? 0;
    },
    async touch(clientId, usedAt) {
      await db.query(
        `UPDATE authorization_server_records SET last_used_at = $3::timestamptz
          WHERE tenant_id = $1 AND model = 'Client' AND id = $2
            AND (last_used_at IS NULL OR last_used_at < $3::timestamptz)`,
        [tenantId, clientId, usedAt.toISOString()],
      );
    },
    async deleteUnusedSince(cutoff) {
      // Deleted first, by the condition itself: a client used meanwhile is not deleted.
      const { rows } = await db.query<{ id: string }>(
        `DELETE FROM authorization_server_records
          WHERE tenant_id = $1 AND model = 'Client' AND COALESCE(last_used_at, created_at) < $2::timestamptz
          RETURNING id`,
        [tenantId, cutoff.toISOString()],
      );
      for (const { id } of rows) {
        const grants = await db.query<{ id: string }>(
          `SELECT id FROM authorization_server_records
            WHERE tenant_id = $1 AND model = 'Grant' AND payload->>'clientId' = $2`,
          [tenantId, id],
        );
        for (const grant of grants.rows) await revokeGrant(stores, tenantId, grant.id);
      }
      return rows.length;
    },
  };
}

import { createHash } from 'node:crypto';
import type { SqlDatabase } from './sql-database.js';

/** A browser session of a tenant admin as the control plane records it (migration 0005). */
export interface AdminSessionRecord {
  /** The session's random id, sealed into its cookie; only its SHA-256 is stored. */
  readonly id: string;
  readonly tenantId: string;
  /** The admin role binding that admitted the person: deleting it ends the session. */
  readonly bindingName: string;
  readonly issuer: string;
  readonly subject: string;
  /** ms since the epoch. */
  readonly expiresAt: number;
}

/**
 * The server-side half of admin sessions, shared by every replica through
 * the control plane: a session is live while its row is, so signing out on
 * one replica ends it on all of them, and deleting the binding that admitted
 * it, suspending its tenant or deleting the tenant ends it in the same
 * transaction (foreign keys and a trigger, migration 0005).
 */
export interface AdminSessionRows {
  /**
   * Records a new session; false when its binding or tenant is gone (or the
   * tenant is suspended) by now, so that no session outlives what admitted it.
   */
  open(session: AdminSessionRecord): Promise<boolean>;
  /** Whether the session with this id is recorded for this tenant and not expired. */
  isLive(id: string, tenantId: string): Promise<boolean>;
  /** Ends one session (sign-out); true when it was live. */
  end(id: string): Promise<boolean>;
  /** Deletes the rows of sessions that have expired; returns how many. */
  sweepExpired(): Promise<number>;
}

/** Postgres's foreign_key_violation (Appendix A, error codes): the binding or tenant was deleted meanwhile. */
const FOREIGN_KEY_VIOLATION = '23503';

const hashOf = (id: string): string => createHash('sha256').update(id, 'utf8').digest('hex');

export function createAdminSessionRows(db: SqlDatabase): AdminSessionRows {
  return {
    async open(session) {
      try {
        const { affectedRows } = await db.query(
          `INSERT INTO admin_sessions (id_hash, tenant_id, binding_name, issuer, subject, expires_at)
           SELECT $1, t.id, b.name, $4, $5, to_timestamp($6::double precision / 1000)
           FROM tenants t JOIN admin_role_bindings b ON b.tenant_id = t.id AND b.name = $3
           WHERE t.id = $2 AND t.status = 'active'`,
          [
            hashOf(session.id),
            session.tenantId,
            session.bindingName,
            session.issuer,
            session.subject,
            session.expiresAt,
          ],
        );
        return affectedRows === 1;
      } catch (error) {
        if ((error as { code?: unknown }).code === FOREIGN_KEY_VIOLATION) return false;
        throw error;
      }
    },
    async isLive(id, tenantId) {
      const { rows } = await db.query(
        'SELECT 1 FROM admin_sessions WHERE id_hash = $1 AND tenant_id = $2 AND expires_at > now()',
        [hashOf(id), tenantId],
      );
      return rows.length === 1;
    },
    async end(id) {
      const { affectedRows } = await db.query('DELETE FROM admin_sessions WHERE id_hash = $1', [hashOf(id)]);
      return affectedRows === 1;
    },
    async sweepExpired() {
      const { affectedRows } = await db.query('DELETE FROM admin_sessions WHERE expires_at <= now()');
      return affectedRows;
    },
  };
}

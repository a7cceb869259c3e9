import { createHash } from 'node:crypto';
import type { SqlDatabase } from './sql-database.js';

/** A browser session of an operator as the control plane records it (migration 0008). */
export interface OperatorSessionRecord {
  /** The session's random id, sealed into its cookie; only its SHA-256 is stored. */
  readonly id: string;
  readonly issuer: string;
  readonly subject: string;
  /** ms since the epoch. */
  readonly expiresAt: number;
}

/**
 * The server-side half of operator sessions, shared by every replica through
 * the control plane: the cookie names a row, and the session is live while
 * that row is and has not expired, so signing out on one replica ends it on
 * all of them and a copied cookie stops working at once.
 */
export interface OperatorSessionRows {
  open(session: OperatorSessionRecord): Promise<void>;
  /** The live (recorded, unexpired) session with this id, or undefined. */
  find(id: string): Promise<OperatorSessionRecord | undefined>;
  /** Ends one session (sign-out); true when it was recorded. */
  end(id: string): Promise<boolean>;
  /** Deletes the rows of sessions that have expired; returns how many. */
  sweepExpired(): Promise<number>;
}

const hashOf = (id: string): string => createHash('sha256').update(id, 'utf8').digest('hex');

export function createOperatorSessionRows(db: SqlDatabase): OperatorSessionRows {
  return {
    async open(session) {
      await db.query(
        `INSERT INTO operator_sessions (id_hash, issuer, subject, expires_at)
         VALUES ($1, $2, $3, to_timestamp($4::double precision / 1000))`,
        [hashOf(session.id), session.issuer, session.subject, session.expiresAt],
      );
    },
    async find(id) {
      const { rows } = await db.query(
        `SELECT issuer, subject, (extract(epoch FROM expires_at) * 1000)::double precision AS expires_ms
         FROM operator_sessions WHERE id_hash = $1 AND expires_at > now()`,
        [hashOf(id)],
      );
      const row = rows[0] as { issuer: string; subject: string; expires_ms: number | string } | undefined;
      if (row === undefined) return undefined;
      return { id, issuer: row.issuer, subject: row.subject, expiresAt: Number(row.expires_ms) };
    },
    async end(id) {
      const { affectedRows } = await db.query('DELETE FROM operator_sessions WHERE id_hash = $1', [hashOf(id)]);
      return affectedRows === 1;
    },
    async sweepExpired() {
      const { affectedRows } = await db.query('DELETE FROM operator_sessions WHERE expires_at <= now()');
      return affectedRows;
    },
  };
}

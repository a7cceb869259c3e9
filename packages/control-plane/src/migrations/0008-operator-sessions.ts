/**
 * Browser sessions of operators, recorded like the tenant admins' (0004) so
 * that signing out ends one on the server, on every replica at once: the
 * sealed cookie carries only the session's id (and its CSRF secret), the row
 * carries who signed in and until when, and a request whose row is gone or
 * expired is refused. Operators belong to no tenant, so the rows reference
 * none. `id_hash` is the SHA-256 of the session's id: the id itself lives
 * only in the sealed cookie.
 */
export const operatorSessions = `
CREATE TABLE operator_sessions (
  id_hash text PRIMARY KEY,
  issuer text NOT NULL,
  subject text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX operator_sessions_by_expiry ON operator_sessions (expires_at);
`;

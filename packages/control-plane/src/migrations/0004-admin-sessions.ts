/**
 * Browser sessions of tenant admins, recorded so that they can be ended on
 * the server, on every replica at once: the sealed cookie names its row, and
 * a request whose row is gone is refused. Rows end three ways besides
 * sign-out and expiry, each in the transaction of the write that causes it:
 * - the admin role binding that admitted the session is deleted (the foreign
 *   key cascades), so removing a binding ends the sessions it granted;
 * - the tenant is deleted (the cascade, through its bindings as well);
 * - the tenant is suspended (the trigger below); reactivating it does not
 *   bring them back.
 * `id_hash` is the SHA-256 of the session's id: the id itself lives only in
 * the sealed cookie.
 */
export const adminSessions = `
CREATE TABLE admin_sessions (
  id_hash text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  binding_name text NOT NULL,
  issuer text NOT NULL,
  subject text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  FOREIGN KEY (tenant_id, binding_name) REFERENCES admin_role_bindings (tenant_id, name) ON DELETE CASCADE
);
CREATE INDEX admin_sessions_by_binding ON admin_sessions (tenant_id, binding_name);
CREATE INDEX admin_sessions_by_expiry ON admin_sessions (expires_at);

CREATE FUNCTION admin_sessions_end_on_suspend() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM admin_sessions WHERE tenant_id = NEW.id;
  RETURN NULL;
END
$$;
CREATE TRIGGER admin_sessions_end_on_suspend AFTER UPDATE OF status ON tenants
  FOR EACH ROW WHEN (NEW.status = 'suspended')
  EXECUTE FUNCTION admin_sessions_end_on_suspend();
`;

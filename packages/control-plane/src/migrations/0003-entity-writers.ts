/**
 * Who last wrote each issuer, source, grant and role binding: `operator`
 * (the bootstrap file, a platform operator's admin call) or `tenant-admin`.
 * The gateway applies its egress policy to the outbound connections of what
 * tenant admins wrote, and not to operators' (docs/configuration.md, "Egress
 * policy"). Rows written before this step take the kind of the actor of
 * their latest audited write, so an upgrade never lifts a tenant admin's
 * entry out of the policy.
 */
const entityWriters = (table: string, targetType: string): string => `
ALTER TABLE ${table}
  ADD COLUMN written_by text NOT NULL DEFAULT 'operator' CHECK (written_by IN ('operator', 'tenant-admin'));
UPDATE ${table} AS entity SET written_by = 'tenant-admin'
  WHERE (
    SELECT audit.actor ->> 'kind' FROM audit_events AS audit
    WHERE audit.tenant_id = entity.tenant_id AND audit.target_type = '${targetType}'
      AND audit.target_id = entity.name AND audit.action IN ('create', 'update')
    ORDER BY audit.id DESC LIMIT 1
  ) = 'tenant-admin';
`;

export const entityWritersSchema = [
  entityWriters('issuers', 'issuer'),
  entityWriters('sources', 'source'),
  entityWriters('grants', 'grant'),
  entityWriters('admin_role_bindings', 'admin-role-binding'),
].join('');

/**
 * The first control-plane schema. Each entity a tenant owns (issuers,
 * sources, grants, admin role bindings) is a JSON document in the bootstrap
 * file's own shape, keyed by the tenant and a name, so one validator serves
 * the file and the admin API and one set of statements serves every entity.
 *
 * `version` on every row is the optimistic-concurrency counter behind the
 * admin API's ETag / If-Match (RFC 9110 §8.8.3, §13.1.1). `revision` on a
 * tenant increases with any change to the tenant or anything it owns, so a
 * replica's periodic reconciliation compares one number per tenant.
 */
const tenantEntity = (table: string, extraColumns = ''): string => `
CREATE TABLE ${table} (
  tenant_id text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  name text NOT NULL,
  document jsonb NOT NULL,${extraColumns}
  -- The order entities were added in: sources are listed in this order.
  ordinal bigint GENERATED ALWAYS AS IDENTITY,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, name)
);`;

export const initialSchema = `
CREATE TABLE tenants (
  id text PRIMARY KEY,
  document jsonb NOT NULL,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  managed_by text NOT NULL DEFAULT 'api' CHECK (managed_by IN ('bootstrap', 'api')),
  version integer NOT NULL DEFAULT 1,
  revision bigint NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
${tenantEntity('issuers')}
${tenantEntity(
  'sources',
  `
  -- Credentials, AES-256-GCM sealed with a key derived from SECRETS_KEY; never returned.
  sealed_secrets text,`,
)}
${tenantEntity('grants')}
${tenantEntity('admin_role_bindings')}

-- No foreign key: the audit trail of a tenant outlives the tenant.
CREATE TABLE audit_events (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant_id text,
  occurred_at timestamptz NOT NULL DEFAULT now(),
  actor jsonb NOT NULL,
  client_address text,
  action text NOT NULL,
  target_type text NOT NULL,
  target_id text NOT NULL,
  before jsonb,
  after jsonb
);
CREATE INDEX audit_events_by_tenant ON audit_events (tenant_id, id DESC);
`;

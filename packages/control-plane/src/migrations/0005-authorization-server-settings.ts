/**
 * A tenant's hosted authorization server settings (the bootstrap file's
 * `authorizationServer`), one row per tenant at most (its name is always
 * `default`): a tenant admin's to write, with its own version (ETag) so that
 * changing it never races an operator's change of the tenant's settings.
 * The upstream's client secret is sealed apart from the document, as a
 * source's credentials are, and never returned; `written_by` holds the
 * upstream a tenant admin wrote to the egress policy.
 */
export const authorizationServerSettings = `
CREATE TABLE authorization_servers (
  tenant_id text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (name = 'default'),
  document jsonb NOT NULL,
  -- The upstream's client secret, AES-256-GCM sealed with a key derived from SECRETS_KEY; never returned.
  sealed_secrets text,
  written_by text NOT NULL DEFAULT 'operator' CHECK (written_by IN ('operator', 'tenant-admin')),
  ordinal bigint GENERATED ALWAYS AS IDENTITY,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, name)
);
`;

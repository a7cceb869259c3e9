/**
 * What a tenant's hosted authorization server keeps (see the authorization
 * server package):
 * - `authorization_server_records`: oidc-provider's stored models (registered
 *   clients, grants, refresh tokens; without Redis also codes, interactions
 *   and sessions), one JSON payload per (tenant, model, id). `grant_id` finds
 *   every token of a grant when it is revoked (RFC 7009 section 2.1, RFC 6749
 *   section 4.1.2 on a reused code), `uid` finds a session by its uid.
 *   `consumed_at` makes a code or a rotated refresh token single use: it is
 *   set by one conditional UPDATE, so of two replicas redeeming the same
 *   code exactly one succeeds. Expired rows are swept by one replica.
 * - `authorization_server_signing_keys`: the tenant's RS256 keys, the
 *   private JWK sealed with a key derived for this purpose (ADR 0009). At
 *   most one key signs (the one not retired); a retired key is kept, for
 *   verifiers, until every token it signed has expired.
 * - `authorization_server_accounts`: the claims mapped from the upstream
 *   sign-in, per account, so tokens issued on refresh carry them too.
 * Deleting a tenant deletes all of it (the foreign keys cascade).
 */
export const authorizationServer = `
CREATE TABLE authorization_server_records (
  tenant_id text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  model text NOT NULL,
  id text NOT NULL,
  payload jsonb NOT NULL,
  grant_id text,
  uid text,
  expires_at timestamptz,
  consumed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  PRIMARY KEY (tenant_id, model, id)
);
CREATE INDEX authorization_server_records_by_uid ON authorization_server_records (tenant_id, model, uid)
  WHERE uid IS NOT NULL;
CREATE INDEX authorization_server_records_by_grant ON authorization_server_records (tenant_id, grant_id)
  WHERE grant_id IS NOT NULL;
CREATE INDEX authorization_server_records_by_expiry ON authorization_server_records (expires_at)
  WHERE expires_at IS NOT NULL;

CREATE TABLE authorization_server_signing_keys (
  tenant_id text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  kid text NOT NULL,
  alg text NOT NULL,
  public_jwk jsonb NOT NULL,
  sealed_private_jwk text NOT NULL,
  created_at timestamptz NOT NULL,
  retired_at timestamptz,
  PRIMARY KEY (tenant_id, kid)
);
CREATE UNIQUE INDEX authorization_server_signing_keys_one_active ON authorization_server_signing_keys (tenant_id)
  WHERE retired_at IS NULL;

CREATE TABLE authorization_server_accounts (
  tenant_id text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  account_id text NOT NULL,
  claims jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, account_id)
);
`;

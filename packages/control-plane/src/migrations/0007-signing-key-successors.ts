/**
 * A tenant's next signing key is published before it signs
 * (`authorization_server_signing_keys.signing_since`, NULL while it is only
 * published). Every replica's resource server holds the tenant's JWKS inline
 * and rebuilds it when it hears that the keys changed (ADR 0011), so a token
 * of a key that signs from the moment it exists could reach a replica that
 * has not heard of it yet. Publishing first, and signing only after the
 * change has had time to reach every replica, closes that gap.
 *
 * A tenant has at most one key that signs (not retired, `signing_since`
 * set) and at most one successor waiting (`signing_since` NULL). The keys of
 * an older gateway have signed since they were made.
 */
export const signingKeySuccessors = `
ALTER TABLE authorization_server_signing_keys ADD COLUMN signing_since timestamptz;
UPDATE authorization_server_signing_keys SET signing_since = created_at;
DROP INDEX authorization_server_signing_keys_one_active;
CREATE UNIQUE INDEX authorization_server_signing_keys_one_signing ON authorization_server_signing_keys (tenant_id)
  WHERE retired_at IS NULL AND signing_since IS NOT NULL;
CREATE UNIQUE INDEX authorization_server_signing_keys_one_successor ON authorization_server_signing_keys (tenant_id)
  WHERE signing_since IS NULL;
`;

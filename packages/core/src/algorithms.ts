/**
 * JWS algorithms an access token may be signed with: asymmetric only. A
 * shared-secret (HS*) token can be forged by anyone holding the "key", which
 * for a JWKS is public; `none` is no signature at all (RFC 8725 section 3.1).
 * The configuration schema and the verifier both enforce this list.
 */
export const ASYMMETRIC_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const;

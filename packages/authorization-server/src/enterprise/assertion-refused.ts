import type { errors as ProviderErrors } from 'oidc-provider';
import { errors } from '../oidc-provider-module.js';

/** Why an identity assertion was refused: stable codes for logs and tests, never shown to the client as such. */
export type AssertionRefusalReason =
  | 'malformed'
  | 'too_large'
  | 'wrong_type'
  | 'key_reference_header'
  | 'unknown_issuer'
  | 'algorithm_not_allowed'
  | 'keys_unavailable'
  | 'no_matching_key'
  | 'bad_signature'
  | 'wrong_audience'
  | 'expired'
  | 'not_yet_valid'
  | 'issued_in_future'
  | 'lifetime_too_long'
  | 'missing_claim'
  | 'invalid_claim'
  | 'wrong_client'
  | 'missing_resource'
  | 'wrong_resource'
  | 'no_offered_scope'
  | 'no_subject'
  | 'replayed';

/**
 * An identity assertion this authorization server does not accept. RFC 7523
 * section 3.1 and draft-ietf-oauth-identity-assertion-authz-grant section
 * 4.4.1: the token endpoint answers `invalid_grant`; the description says
 * what was wrong (public: it names claims and settings, never the
 * assertion's contents beyond what the client sent itself).
 */
export class AssertionRefused extends Error {
  readonly reason: AssertionRefusalReason;

  constructor(reason: AssertionRefusalReason, description: string) {
    super(description);
    this.name = 'AssertionRefused';
    this.reason = reason;
  }
}

/**
 * The oidc-provider error the token endpoint renders: HTTP 400 with
 * `error` and `error_description` (RFC 6749 section 5.2). oidc-provider's own
 * InvalidGrant keeps a fixed description, so the custom error carries ours.
 */
export function invalidGrant(description: string): ProviderErrors.OIDCProviderError {
  return new errors.CustomOIDCProviderError('invalid_grant', description);
}

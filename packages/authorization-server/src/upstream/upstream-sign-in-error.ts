/**
 * Why a sign-in at the tenant's identity provider (the upstream) failed, as
 * the sign-in page tells the user:
 * - `upstream_unreachable`: the provider did not answer (down, timed out,
 *   refused by the egress policy); trying again later may work.
 * - `upstream_misconfigured`: the provider answered, but not as an OpenID
 *   Connect provider the gateway can use (discovery `issuer` differs, an
 *   endpoint is missing or not https, no PKCE S256, a malformed token
 *   response or userinfo); the tenant admin must fix the settings.
 * - `upstream_refused`: the provider refused the sign-in or the code
 *   (`access_denied`, `invalid_grant`, a wrong client secret).
 * - `sign_in_expired`: the callback's `state` is unknown: expired, already
 *   used, or never issued (RFC 6749 section 10.12); the user starts again.
 * - `id_token_invalid`: the ID token failed a check of OpenID Connect Core
 *   1.0 section 3.1.3.7 (signature, issuer, audience, nonce, expiry).
 * - `subject_missing`: the mapped subject claim is absent or unusable, so
 *   there is no one to sign in.
 */
export type UpstreamSignInErrorCode =
  | 'upstream_unreachable'
  | 'upstream_misconfigured'
  | 'upstream_refused'
  | 'sign_in_expired'
  | 'id_token_invalid'
  | 'subject_missing';

/**
 * A failed upstream sign-in. `message` is public: it may be shown on the
 * sign-in page (escaped) and names nothing secret. `detail` is internal
 * (the provider's own error description, the failed check, the network
 * error), for the logs only, as oidc-provider keeps `error_description`
 * apart from the cause.
 */
export class UpstreamSignInError extends Error {
  override readonly name = 'UpstreamSignInError';

  constructor(
    readonly code: UpstreamSignInErrorCode,
    message: string,
    /** Internal: for the logs, never the page. */
    readonly detail?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

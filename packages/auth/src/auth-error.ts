/**
 * RFC 6750 section 3.1 error codes a resource server answers with when it
 * refuses a request's credentials. `insufficient_scope` is the policy's call
 * (403), not the verifier's, so it is not here.
 */
export type AuthErrorCode = 'invalid_token' | 'invalid_request';

/**
 * A refused credential. `message` is public (it may become the challenge's
 * `error_description`): it never contains the token, a claim value or key
 * material. Internal detail goes to the verifier's logs only.
 */
export class AuthError extends Error {
  /**
   * For the operator's log only, never the response: what the token carried
   * that was refused, and which setting would accept it. Set where a refusal
   * usually means the configuration and the identity provider disagree
   * (issuer, `typ`, audience, algorithm), not for forged or expired tokens.
   */
  readonly operatorHint: OperatorHint | undefined;

  /**
   * RFC 6750 section 3.1: `invalid_request` answers 400, `invalid_token` 401.
   * The gateway maps each to its registry code (MCPGW_AUTH_REQUEST_INVALID,
   * MCPGW_TOKEN_INVALID), which holds the status.
   */
  readonly code: AuthErrorCode;

  constructor(code: AuthErrorCode, message: string, operatorHint?: OperatorHint) {
    super(message);
    this.name = 'AuthError';
    this.code = code;
    this.operatorHint = operatorHint;
  }
}

/** What a refused token carried, and the setting that would have accepted it (never the token itself). */
export interface OperatorHint {
  /** The header parameters and claims that decided the refusal, as received (e.g. `{ iss }`, `{ typ }`, `{ aud }`). */
  readonly received: Readonly<Record<string, unknown>>;
  /** The setting to change, in the bootstrap file's terms, with the values it holds now. */
  readonly setting: string;
}

export function isAuthError(value: unknown): value is AuthError {
  return value instanceof AuthError;
}

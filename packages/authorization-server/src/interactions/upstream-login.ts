/**
 * The port of the upstream sign-in (OpenID Connect at the tenant's identity
 * provider), which the interaction handler calls and the upstream module
 * implements. The handler never sees the upstream's parameters: it hands
 * over the interaction to resume and gets back who signed in.
 */
export interface UpstreamLogin {
  /**
   * Begins a sign-in at the upstream for the interaction `interactionUid`:
   * stores what the callback needs (state, nonce, PKCE verifier, the uid)
   * and returns the upstream's authorization URL to send the browser to.
   */
  start(request: { interactionUid: string; tenantId: string }): Promise<string>;
  /**
   * Completes a sign-in from the query of `${issuer}/callback`: checks the
   * state, redeems the code, verifies the ID token, maps and stores the
   * user's claims. Returns the interaction to resume and the account it
   * signed in. Throws {@link UpstreamLoginError} when the sign-in failed.
   */
  finish(query: URLSearchParams): Promise<{ interactionUid: string; accountId: string }>;
}

/**
 * A sign-in at the upstream that did not complete: the upstream answered
 * with an error (the user cancelled, or was not allowed), or its answer did
 * not check out. The handler shows the error page, and when the interaction
 * is known it answers the client too (with `access_denied`).
 */
export class UpstreamLoginError extends Error {
  /** The OAuth error code: the upstream's own (RFC 6749 section 4.1.2.1), or ours. */
  readonly error: string;
  /** Safe to show the user: no secret, no token. */
  readonly description: string | undefined;
  /** The interaction the sign-in was for, when the state identified one. */
  readonly interactionUid: string | undefined;
  /** Why, in the upstream module's words (e.g. `id_token_invalid`), when it said; for the audit log. */
  readonly reason: string | undefined;

  constructor(options: {
    error: string;
    description?: string;
    interactionUid?: string;
    reason?: string;
    cause?: unknown;
  }) {
    super(
      `upstream sign-in failed: ${options.error}${options.description === undefined ? '' : `: ${options.description}`}`,
      {
        cause: options.cause,
      },
    );
    this.name = 'UpstreamLoginError';
    this.error = options.error;
    this.description = options.description;
    this.interactionUid = options.interactionUid;
    this.reason = options.reason;
  }
}

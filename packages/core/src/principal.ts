/**
 * A caller whose access token was verified: only what the policy may use,
 * taken from verified claims. Never the token itself.
 */
export interface Principal {
  /** The `iss` of the token (one of the tenant's configured issuers). */
  readonly issuer: string;
  /** The `sub` claim. */
  readonly subject: string;
  /** `client_id` (RFC 9068) or `azp`, when present. */
  readonly clientId?: string | undefined;
  /** Granted scopes (from `scope`/`scp`, per issuer configuration). */
  readonly scopes: readonly string[];
  /** Groups or roles (per issuer configuration). */
  readonly groups: readonly string[];
  /** `exp`, in seconds since the epoch. */
  readonly expiresAt: number;
}

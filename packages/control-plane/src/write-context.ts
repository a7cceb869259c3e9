/** Who changed the control plane, or acted at a tenant's authorization server: recorded in the audit log. */
export interface Actor {
  /**
   * `operator` (platform), `tenant-admin`, or `bootstrap` (the GATEWAY_CONFIG
   * file at start or SIGHUP); at the tenant's hosted authorization server,
   * `end-user` (an account that signed in or was vouched for) or `client`
   * (a client that registered itself).
   */
  readonly kind: 'operator' | 'tenant-admin' | 'bootstrap' | 'end-user' | 'client';
  /** The token's `sub`, the file's path for `bootstrap`, the account id of an `end-user`, the client id of a `client`. */
  readonly subject: string;
  /** The token's `iss`, when a token made the change; the tenant's issuer for `end-user` and `client`. */
  readonly issuer?: string;
  /** The OAuth client the `end-user` or `client` acted through. */
  readonly clientId?: string;
}

/** Each write names its actor and where the request came from. */
export interface WriteContext {
  readonly actor: Actor;
  /** The client's address as the gateway saw it; absent for bootstrap. */
  readonly clientAddress?: string;
}

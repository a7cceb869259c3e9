/** Who changed the control plane: recorded with every write in the audit log. */
export interface Actor {
  /** `operator` (platform), `tenant-admin`, or `bootstrap` (the GATEWAY_CONFIG file at start or SIGHUP). */
  readonly kind: 'operator' | 'tenant-admin' | 'bootstrap';
  /** The token's `sub`, or the file's path for `bootstrap`. */
  readonly subject: string;
  /** The token's `iss`, when a token made the change. */
  readonly issuer?: string;
}

/** Each write names its actor and where the request came from. */
export interface WriteContext {
  readonly actor: Actor;
  /** The client's address as the gateway saw it; absent for bootstrap. */
  readonly clientAddress?: string;
}

/** How one JWKS load went: discovery (when needed) and the key set fetched and parsed, or not. */
export type JwksFetchOutcome = 'ok' | 'error';

/** How one RFC 7662 introspection call went (cached answers are not calls). */
export type IntrospectionOutcome = 'active' | 'inactive' | 'error';

/**
 * Hooks a verifier calls at its network points, so that the app can count
 * them (Prometheus) without this package knowing any metrics library. Called
 * synchronously; they must not throw.
 */
export interface VerifierObserver {
  /** A JWKS load finished (the first one, a periodic refresh, or an unknown `kid`'s refetch). */
  jwksFetched?(outcome: JwksFetchOutcome): void;
  /** An introspection request was answered (`active` true or not) or failed. */
  introspected?(outcome: IntrospectionOutcome): void;
}

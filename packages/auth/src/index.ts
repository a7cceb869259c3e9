// The public surface of @mcpgw/auth: what apps/gateway uses. Tests reach the
// other modules by path (../src/<module>.js).

/** The error a failed verification throws; its code picks the 401/403 challenge (RFC 6750 section 3.1). */
export { AuthError, type AuthErrorCode } from './auth-error.js';
/** Reads the bearer token from the Authorization header, refusing a query-string token (RFC 6750 section 2). */
export { extractBearerToken } from './bearer-token.js';
/** Builds the WWW-Authenticate challenge of a 401/403 (RFC 6750 section 3, RFC 9728 section 5.1). */
export { bearerChallenge } from './bearer-challenge.js';
/** The protected resource metadata document (RFC 9728 section 3.2). */
export { protectedResourceMetadata } from './protected-resource-metadata.js';
/** A tenant's trusted issuer, as the config layer hands it over. */
export type { IssuerSettings } from './issuer-settings.js';
/** Verifies access tokens (JWT or introspection) against a tenant's issuers. */
export { createTokenVerifier, type TokenVerifier } from './token-verifier.js';
/** Hooks the app counts JWKS fetches and introspection requests through (metrics, traces). */
export type { IntrospectionOutcome, JwksFetchOutcome, VerifierObserver } from './verifier-observer.js';
/** An issuer's validated RFC 8414 / OpenID Connect discovery metadata (the admin sign-in reads its endpoints). */
export { discoverIssuerMetadata } from './discovery.js';
/** A fetch whose connections pass an egress guard (an issuer a tenant admin configured). */
export { egressFetch } from './egress-fetch.js';
/** The Principal of verified claims under an issuer's claim settings (the admin preview maps given claims with it too). */
export { principalFromClaims } from './principal-from-claims.js';
/**
 * One issuer's cached verification keys (cooldown on unknown kids, stale-if-error), for other
 * verifiers of an issuer's JWTs: the hosted authorization server's identity assertion grants.
 */
export { IssuerKeySet, KeysUnavailableError } from './jwks-cache.js';
export type { IssuerKeysSource } from './issuer-settings.js';

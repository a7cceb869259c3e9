export { AuthError, isAuthError, type AuthErrorCode } from './auth-error.js';
export { extractBearerToken, type BearerTokenRequest } from './bearer-token.js';
export { bearerChallenge, type BearerChallengeInput } from './bearer-challenge.js';
export { protectedResourceMetadata, type ProtectedResourceMetadataInput } from './protected-resource-metadata.js';
export {
  ASYMMETRIC_ALGORITHMS,
  validateIssuerSettings,
  type IssuerKeysSource,
  type IssuerSettings,
} from './issuer-settings.js';
export { createTokenVerifier, type TokenVerifier, type TokenVerifierOptions } from './token-verifier.js';
export type { IntrospectionOutcome, JwksFetchOutcome, VerifierObserver } from './verifier-observer.js';
export { REFETCH_COOLDOWN_MS, REFRESH_INTERVAL_MS } from './jwks-cache.js';
export { FETCH_TIMEOUT_MS } from './bounded-fetch.js';
export { discoveryUrls } from './discovery.js';

// The upstream sign-in's public surface, for the package's entry point and the interaction controller.

/** The OpenID Connect sign-in at the tenant's identity provider (code flow, PKCE S256, state, nonce). */
export {
  createUpstreamSignIn,
  type OpenIdUpstreamSettings,
  type UpstreamIdentity,
  type UpstreamSignIn,
  type UpstreamSignInOptions,
} from './upstream-sign-in.js';
/** Why a sign-in failed: a stable code, a public message and an internal detail. */
export { UpstreamSignInError, type UpstreamSignInErrorCode } from './upstream-sign-in-error.js';
/** The port pending sign-ins are kept in (Redis or SQL), and how long they live. */
export {
  PENDING_SIGN_IN_SECONDS,
  type PendingSignInStore,
  type PendingUpstreamSignIn,
} from './pending-sign-in-store.js';
/** The tenant's claim mapping applied to an upstream identity: the account id and the tokens' claims. */
export { mapUpstreamClaims, MAX_GROUPS, type AccountClaims, type MappedAccount } from './claim-mapping.js';
/** The OAuth code-grant client pieces the admin API's browser sign-in shares. */
export {
  authorizationRequestUrl,
  basicCredentials,
  redeemAuthorizationCode,
  type CodeClient,
} from './authorization-code-client.js';
export { randomToken } from './pkce.js';

// The public surface of @mcpgw/authorization-server.
export * from './upstream/index.js';
/** The clients a tenant's hosted authorization server accepts (metadata documents, dynamic registration). */
export * from './clients/index.js';

/** Enterprise-managed authorization: the RFC 7523 JWT bearer grant accepting ID-JAGs. */
export {
  idJagGrantType,
  ID_JAG_GRANT_PROFILE,
  JWT_BEARER_GRANT_TYPE,
  type AssertionAccounts,
  type AssertionClaimMapper,
  type GrantTypeRegistration,
  type IdJagGrantOptions,
  type MappedAssertionAccount,
} from './enterprise/id-jag-grant-type.js';
/** The verification keys of the identity providers trusted to issue ID-JAGs. */
export {
  createAssertionKeyResolver,
  type AssertionIssuerSettings,
  type AssertionKeyResolver,
  type AssertionKeyResolverOptions,
} from './enterprise/assertion-issuer-keys.js';
/** The single-use store of assertions' `jti`s (implemented over Redis or SQL). */
export { assertionReplayKey, type AssertionReplayStore } from './enterprise/assertion-replay.js';

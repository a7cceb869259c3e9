// The public surface of @mcpgw/authorization-server: a tenant's hosted OAuth 2.1
// authorization server (docs/adr/0011). Tests reach the other modules by path.

/** Creates one tenant's server, and the options it is built from (the injected modules' ports). */
export { createTenantAuthorizationServer } from './create-tenant-authorization-server.js';
export type {
  ExtraResource,
  GrantTypeRegistration,
  InteractionContext,
  InteractionHandler,
  RoutedRequest,
  StaticClient,
  TenantAuthorizationServer,
  TenantAuthorizationServerOptions,
} from './authorization-server-options.js';
/** Every tenant's server on this replica, following the tenant registry's runtimes. */
export {
  createTenantAuthorizationServers,
  type CreatedAuthorizationServer,
  type TenantAuthorizationServers,
  type TenantAuthorizationServersOptions,
} from './tenant-authorization-servers.js';
/** The issuer, metadata and endpoint URLs of a tenant's server. */
export {
  authorizationServerIssuer,
  authorizationServerMetadataUrl,
  authorizationServerPath,
  ENDPOINT_PATHS,
  openIdConfigurationUrls,
} from './authorization-server-urls.js';
/** Which tenant's server a request is for, and the path within it. */
export { routeAuthorizationServerRequest, type AuthorizationServerRoute } from './request-routing.js';
/** The scopes every server offers besides the tenant's, and how long a code lives. */
export { AUTHORIZATION_CODE_TTL_SECONDS, PROTOCOL_SCOPES } from './provider-configuration.js';
/** The demo login (loopback only): its one account; automatic consent for the standalone test issuer only. */
export { DEMO_EMAIL, DEMO_NAME, DEMO_SUBJECT, findDemoAccount } from './demo-account.js';
export { demoAutoConsent } from './demo-auto-consent.js';
/** The keystore-file key source (the demo login's and the local operator issuer's keys), and a private JWKS's public half. */
export { loadOrCreateKeystore, publicKeysOf, SIGNING_ALGORITHM, type Keystore } from './keystore-file.js';
/** Mints an access token without a browser (`npm run token`), as a loopback issuer's token endpoint would. */
export { ACCESS_TOKEN_TTL_SECONDS, mintAccessToken } from './mint-access-token.js';
/** oidc-provider's storage, account and configuration types, as the injected modules implement them. */
export type { Adapter, AdapterPayload, Configuration, FindAccount } from 'oidc-provider';

/** The upstream sign-in at the tenant's OpenID Connect provider, and the claim mapping. */
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

/** The sign-in and consent pages the core mounts under the issuer, and their ports. */
export {
  createInteractionPages,
  type InteractionPages,
  type InteractionPagesOptions,
  type LoginMethod,
} from './interactions/interaction-handler.js';
export { interactionRouteOf, type InteractionRoute } from './interactions/interaction-route.js';
export { UpstreamLoginError, type UpstreamLogin } from './interactions/upstream-login.js';
export type { ConsentMemory } from './interactions/consent-memory.js';
export { CSRF_KEY_BYTES } from './interactions/csrf-token.js';
/** oidc-provider's `renderError`, showing the same error page. */
export { providerErrorPage } from './interactions/provider-error-page.js';

/** The composition of one tenant's modules (sign-in, consent, accounts, client policy, ID-JAG grant). */
export {
  createTenantModules,
  type TenantModulesDeps,
  type TenantServerContext,
  type TenantServerModules,
} from './composition/tenant-modules.js';
export type { TenantModuleStores } from './composition/tenant-module-stores.js';
export type { AccountClaimsStore, AccountRecord } from './composition/account-records.js';

/** oidc-provider's records: SQL and Redis stores, the per-tenant adapter, one bundle for the process. */
export {
  createAuthorizationServerStorage,
  type AuthorizationServerStorage,
  type AuthorizationServerStorageOptions,
} from './store/authorization-server-storage.js';
export { createAdapterFactory, type AdapterFactory } from './store/adapter-factory.js';
export { createSqlRecordStore, deleteExpiredRecords, type SqlRecordStoreOptions } from './store/sql-record-store.js';
export {
  createRedisRecordStore,
  type RedisCommands,
  type RedisRecordStoreOptions,
} from './store/redis-record-store.js';
export { revokeGrant, revokeTokensOfGrant, type RecordStores } from './store/grant-revocation.js';
export { GRANT_MEMBER_MODELS, SHORT_LIVED_MODELS, type Clock, type RecordStore } from './store/records.js';
/** Values used once, with a lifetime: the upstream sign-in's state (put, take once) and single-use keys (firstUse). */
export { createShortLivedStore, type ShortLivedStore } from './store/short-lived-store.js';
export { bindFirstUse, bindShortLivedStore, type TenantShortLivedStore } from './store/pending-state.js';
/** Deletes expired SQL records periodically, one replica at a time. */
export {
  startExpiredRecordSweep,
  type ExpiredRecordSweep,
  type ExpiredRecordSweepOptions,
} from './store/expired-record-sweep.js';
/** Per-tenant RS256 signing keys, sealed in the control plane, rotated and retired. */
export {
  createSigningKeyRows,
  generateSigningKey,
  SIGNING_KEYS_CHANNEL,
  type SigningKeyRows,
  type SigningKeySealer,
  type StoredSigningKey,
  type TenantSigningKeys,
} from './signing-keys.js';
export {
  createSigningKeys,
  startKeyRotation,
  SUCCESSOR_PUBLICATION_SECONDS,
  type KeyRotationScheduleOptions,
  type SigningKeys,
  type SigningKeysOptions,
} from './key-rotation.js';
/** Mapped claims per account, for tokens issued on refresh. */
export { createAccountClaims, findAccountFrom, type AccountClaims, type AccountClaimValues } from './account-claims.js';
/** The admin API's port: connected clients, grants, revocation. */
export {
  createAuthorizationRecords,
  type AuthorizationRecords,
  type AuthorizationRecordsOptions,
  type ConnectedClient,
  type ConnectedClientKind,
  type UserGrant,
  type UserGrantFilter,
} from './authorization-records.js';
/** The clients policy's port: count, last use and expiry of one tenant's registered clients. */
export {
  createRegisteredClientRows,
  type RegisteredClientRows,
  type RegisteredClientRowsOptions,
} from './store/registered-client-rows.js';
export { storedTenantStores } from './composition/stored-tenant-stores.js';

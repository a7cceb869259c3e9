// The public surface of @mcpgw/config: what apps/gateway, bench and other
// packages' tests use. Tests reach the other modules by path (../src/<module>.js).

/** Why the configuration was refused, with every issue's path. */
export { ConfigError } from './config-error.js';
/** Parses the environment (readEnv) and the loopback check the gateway applies to dev-only settings. */
export { isLoopbackHost, readEnv, type EnvConfig } from './env.js';
/** Loads environment and bootstrap file into the validated gateway configuration. */
export { loadConfig, type GatewayConfig } from './load-config.js';
/** One tenant's validated configuration, as the app builds its sources and verifier from it. */
export type { TenantConfig } from './tenant-config.js';
/** Which rules a tenant is held to: served, or still being set up through the admin API. */
export type { TenantCompleteness } from './tenant-completeness.js';
/** A tenant's trusted issuer as written in the bootstrap file. */
export type { IssuerEntry } from './auth-schema.js';
/** A tenant's own rate and concurrency limits (bootstrap file `limits`). */
export type { TenantLimits } from './bootstrap-schema.js';
/** How a tenant's admins sign in from a browser (bootstrap file `adminSignIn`). */
export type { AdminSignIn } from './admin-sign-in-schema.js';
/** Who may manage a tenant through the admin API: a binding's stored document and its type. */
export { adminRoleBindingSchema, type AdminRoleBinding } from './admin-role-binding-schema.js';
/** One problem of a refused configuration, with the path naming it. */
export type { ConfigIssue } from './config-error.js';
/** The bootstrap file's pieces the admin API validates writes with and documents in its OpenAPI document. */
export { slug, sourceTtlMsSchema, tenantLimitsSchema } from './bootstrap-schema.js';
export { grantSchema, issuerSchema } from './auth-schema.js';
/** The admin command line's bearer token (ADMIN_TOKEN). */
export { readAdminToken } from './admin-cli-env.js';
/** Silences dependencies' notices about their future releases (the installed ones are pinned). */
export { silencePinnedDependencyNotices } from './pinned-dependency-notices.js';
/** The documentation beside each environment setting, and the table and .env.example generated from it. */
export { ENV_GROUPS, envSettingDocs, type EnvGroup, type EnvSettingDoc } from './env-setting-docs.js';
export { renderEnvExample, renderEnvTable, withEnvTable } from './env-docs.js';
/** A tenant's hosted OAuth 2.1 authorization server (bootstrap file `authorizationServer`). */
export {
  authorizationServerSchema,
  CONNECTOR_PRESETS,
  type AuthorizationServerSettings,
  type ClaimMapping,
  type ClientPolicy,
  type UpstreamSettings,
} from './authorization-server-schema.js';
/** The hosted authorization server's rules beyond its schema, and the URLs it reaches (judged by the egress policy). */
export { authorizationServerUrls, MAX_EXTRA_CLAIMS, RESERVED_TOKEN_CLAIMS } from './authorization-server-rules.js';

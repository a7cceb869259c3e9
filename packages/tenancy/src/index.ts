/** One tenant as this replica serves it: catalog, authenticator, cache, admin writes. */
export type { RuntimeObservers, RuntimeOptions, StoredPlacement, TenantRuntime } from './tenant-runtime.js';
/** Builds a tenant's runtime from its served configuration; how long a source may take to open. */
export { createTenantRuntime, SOURCE_OPEN_TIMEOUT_MS } from './tenant-runtime.js';
/** The tenants this replica serves, each a runtime swapped in one step while requests are in flight. */
export type { ApplyOutcome, ClosableRuntime, RuntimeLease, TenantRegistry, TenantStatus } from './tenant-registry.js';
/** Creates the registry tenants are served from. */
export { createTenantRegistry } from './tenant-registry.js';
/** A tenant's bearer-token check and protected resource metadata (RFC 9728), composed from its issuers and grants. */
export type {
  Admission,
  AuthOutcome,
  AuthRefusalReason,
  AuthRequest,
  HostedIssuer,
  TenantAuthenticator,
} from './tenant-auth.js';
/** Creates a tenant's authenticator; turns a configured issuer, or the tenant's hosted one, into the verifier's settings. */
export { createTenantAuthenticator, hostedIssuerSettings, toIssuerSettings } from './tenant-auth.js';
/** A tenant's hosted authorization server settings (its own, or the demo login the development issuer stands for). */
export { hostedAuthorizationServerOf } from './hosted-authorization-server.js';
/** The bulkhead between tenants: a cap on each tenant's MCP requests in flight. */
export type { TenantInFlight } from './tenant-in-flight.js';
/** Creates the per-tenant in-flight counter. */
export { createTenantInFlight } from './tenant-in-flight.js';
/** Readiness: the sources' and the cache's health, probed on an interval. */
export type { CacheReachability, HealthMonitor, HealthMonitorOptions } from './health-monitor.js';
/** Creates the health monitor and its probe interval and timeout. */
export { createHealthMonitor, PROBE_INTERVAL_MS, PROBE_TIMEOUT_MS } from './health-monitor.js';
/** The gateway's MCP `serverInfo` for one tenant. */
export { serverIdentity } from './server-identity.js';
/** The gateway's public base URLs, a tenant's resource URI and its protected resource metadata URL. */
export {
  createBaseUrlResolver,
  protectedResourceMetadataUrl,
  publicBaseUrl,
  publicBaseUrls,
  tenantResourceUri,
} from './public-url.js';
/** DNS-rebinding protection: every request's Host and Origin must name this gateway (2026-07-28 transports, Security). */
export { createRequestGuard, type GuardVerdict, type RequestGuardOptions } from './request-guard-policy.js';
/** The keyed fingerprints of a principal (cache keys, logs) that never reveal the principal. */
export { createPrincipalFingerprint, createTenantPrincipalFingerprint } from './principal-fingerprint.js';
/** A start that failed for a reason the operator fixes by changing one setting, and its causes. */
export { databaseFailure, listenFailure, redactedUrl, StartupFailure } from './startup-failure.js';
/** The control-plane store, opened from the environment (Postgres or embedded PGlite), and its sealing keys. */
export type { ControlPlane } from './control-plane/open-control-plane.js';
/** Opens the store, its database alone, the sealing keys, or a local sealing key file. */
export {
  openControlPlane,
  openControlPlaneDatabase,
  readLocalSealingKey,
  sealingKeys,
} from './control-plane/open-control-plane.js';
/** Writes the bootstrap file's tenants into the control plane. */
export { applyBootstrap } from './control-plane/apply-bootstrap.js';
/** Which sources and issuers of a tenant its admins wrote (held to the egress policy), from the stored tenant. */
export { tenantAdminWritesOf, type TenantAdminWrites } from './control-plane/tenant-entries.js';
/** The one function from a stored tenant to its runtime, and a served tenant read from the store. */
export {
  loadServedTenant,
  runtimeOfStoredTenant,
  type StoredTenantRuntimeDeps,
} from './control-plane/stored-tenant-runtime.js';
/** A source's credentials by its type's model and the source as served (the tenant model's, in @mcpgw/control-plane). */
export { credentialsOf, servedSourceEntry, setPath } from '@mcpgw/control-plane';
/** Keeps this replica's tenant runtimes in step with the control plane. */
export type { TenantSync, TenantSyncOptions } from './control-plane/tenant-sync.js';
/** Starts the sync: an initial pass over every tenant, then one per change signal and a full resync after a gap. */
export { startTenantSync } from './control-plane/tenant-sync.js';
/** The revisions topic on the replica bus, and the relay of the control plane's own NOTIFY onto a bus that is not Postgres. */
export { EVERY_TENANT, revisionsTopic } from './control-plane/revisions-topic.js';
export { startControlPlaneRelay, type ControlPlaneRelayOptions } from './control-plane/control-plane-relay.js';

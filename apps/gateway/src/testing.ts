// What tests and benchmarks outside apps/gateway may use of the app, through
// `@mcpgw/gateway/testing` (package.json "exports"), so none of them reaches
// into apps/gateway/src by path. The app's own tests import its modules directly.

/** Builds the Fastify app from a loaded configuration, without listening. */
export { buildApp, type BuildAppOptions } from './app.js';
/** The control plane a gateway serves from, opened from the environment with the bootstrap file applied, as main.ts does. */
export { openServingControlPlane } from './serving-control-plane.js';
export type { ControlPlane } from '@mcpgw/tenancy';
/** The gateway's logger, as the app and main.ts create it. */
export { createGatewayLogger } from './observability/gateway-logger.js';
/** Every source type this build ships, keyed by `type`. */
export { createSourceRegistry } from './source-registry.js';
/** The built-in demo tenant `npm start` serves when no bootstrap file is given. */
export { demoBootstrap } from './demo.js';
/** Mints an access token for a tenant (or an operator token) of a running gateway, as `npm run token` does. */
export { mintOperatorToken, mintTenantToken } from './token-cli.js';
/** Starts OTLP/HTTP tracing as main.ts does when OTEL_EXPORTER_OTLP_ENDPOINT is set. */
export { startOtlpTracing } from './observability/otlp-tracing.js';
/** Tenant events over Redis pub/sub: tests and benchmarks give each replica its own, sharing a namespace. */
export { createRedisTenantEventBus, type RedisTenantEventBus } from '@mcpgw/events';
export type { TenantEvent, TenantEventBus } from '@mcpgw/events';
/** `app.events`: the bus as streams use it, plus what the producers add (watched sources, runtime changes). */
export type { EventsOption, TenantEvents } from '@mcpgw/events';
/** The admin API's route table (tests enumerate every route for isolation and the OpenAPI document). */
export { adminRouteTable } from './admin/admin-routes.js';
export { defineAdminRoute, type AdminRoute } from './admin/admin-route.js';
export type { AdminAuthenticator } from './admin/admin-authenticator.js';
export type { AdminPrincipal } from '@mcpgw/admin';
/** The registry tenants are served from (bench/tenant-registry.ts times its lease against a map lookup). */
export { createTenantRegistry } from '@mcpgw/tenancy';

// The public surface of @mcpgw/dev-authorization-server: what apps/gateway
// uses. Tests reach the other modules by path (../src/<module>.js).

/** Starts the development authorization server the demo tenant trusts. */
export { createDevAuthorizationServer, type DevAuthorizationServer } from './create-dev-authorization-server.js';
/** Mints a demo access token without a browser (`npm run token`). */
export { mintDevAccessToken } from './mint-dev-access-token.js';
/** How long a minted access token lives, which the token CLI prints. */
export { ACCESS_TOKEN_TTL_SECONDS } from './provider-configuration.js';
/** A resource tokens may be issued for, and a client registered from the start. */
export type { DevClient, DevResource } from './resource-servers.js';

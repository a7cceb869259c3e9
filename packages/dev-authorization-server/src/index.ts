export type { DevAuthorizationServer, DevAuthorizationServerOptions } from './create-dev-authorization-server.js';
export { createDevAuthorizationServer, MAX_REGISTERED_CLIENTS } from './create-dev-authorization-server.js';
export type { MintDevAccessTokenInput } from './mint-dev-access-token.js';
export { mintDevAccessToken, TOKEN_CLI_CLIENT_ID } from './mint-dev-access-token.js';
export type { DevResource } from './resource-servers.js';
export { DEMO_NAME, DEMO_SUBJECT } from './demo-account.js';
export { ACCESS_TOKEN_TTL_SECONDS } from './provider-configuration.js';
export { SIGNING_ALGORITHM } from './keystore.js';

// The public surface of @mcpgw/authorization-server. (The core engineer's
// exports join these; tests reach other modules by path.)

/** The sign-in and consent pages the core mounts under the issuer, and their ports. */
export {
  createInteractionHandler,
  type InteractionHandler,
  type InteractionHandlerOptions,
  type LoginMethod,
} from './interactions/interaction-handler.js';
export { interactionRouteOf, type InteractionRoute } from './interactions/interaction-route.js';
export { UpstreamSignInError, type UpstreamSignIn } from './interactions/upstream-sign-in.js';
export type { ConsentMemory } from './interactions/consent-memory.js';
export { CSRF_KEY_BYTES } from './interactions/csrf-token.js';
/** oidc-provider's `renderError`, showing the same error page. */
export { providerErrorPage } from './interactions/provider-error-page.js';

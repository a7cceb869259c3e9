import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthorizationServerSettings } from '@mcpgw/config';
import type { Logger } from '@mcpgw/core';
import type { JWK } from 'jose';
import type { Adapter, Configuration, FindAccount, Provider, TokenEndpointGrantContext } from 'oidc-provider';

/**
 * What one interaction request hands the interaction handler: the tenant's
 * provider (for `interactionDetails`, `interactionFinished`, `Grant`) and the
 * raw request, whose body nothing has read.
 */
export interface InteractionContext {
  readonly provider: Provider;
  readonly tenantId: string;
  readonly issuer: string;
  /** The resources tokens may be issued for: the tenant's canonical MCP resource URI first. */
  readonly resources: readonly string[];
  /** The scopes a client may be granted (options.scopes). */
  readonly scopes: readonly string[];
  /** The scopes a token for this resource indicator may carry; undefined for a resource this server does not serve. */
  resourceScopes(indicator: string): readonly string[] | undefined;
  readonly settings: AuthorizationServerSettings;
  readonly logger: Logger;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
}

/**
 * The sign-in and consent steps (the pages module, with the upstream sign-in):
 * oidc-provider sends the browser to `${issuer}/interaction/{uid}` whenever it
 * needs a login or a consent, and the upstream identity provider sends it
 * back to `${issuer}/callback`.
 */
export interface InteractionHandler {
  /** GET shows the step's page, POST takes its forms; ends with `provider.interactionFinished` or an error page. */
  interaction(context: InteractionContext, uid: string): Promise<void>;
  /** The upstream's redirect back (GET `${issuer}/callback`); absent: 404, as for a sign-in without an upstream. */
  callback?(context: InteractionContext): Promise<void>;
}

/** An extension grant (RFC 6749 section 4.5) at the token endpoint, registered with `provider.registerGrantType`. */
export interface GrantTypeRegistration {
  /** The `grant_type` value, e.g. `urn:ietf:params:oauth:grant-type:jwt-bearer` (RFC 7523 section 2.1). */
  readonly name: string;
  readonly handler: (ctx: TokenEndpointGrantContext) => Promise<void> | void;
  /** The request parameters the handler reads besides `grant_type`, `scope` and `resource`. */
  readonly parameters?: readonly string[];
}

/**
 * A client known from the start (the tenant's admin browser sign-in): public
 * (RFC 6749 section 2.1, `token_endpoint_auth_method` `none`, codes bound by
 * PKCE alone), its redirect URIs exact.
 */
export interface StaticClient {
  readonly clientId: string;
  /** Makes it confidential instead, authenticating with HTTP Basic (RFC 6749 section 2.3.1). */
  readonly clientSecret?: string;
  readonly redirectUris: readonly string[];
}

/**
 * A protected resource other than the tenant's MCP endpoint that the server
 * issues tokens for: the tenant's admin API, for its admins' browser sign-in.
 */
export interface ExtraResource {
  readonly uri: string;
  readonly scopes: readonly string[];
}

/** Everything one tenant's hosted authorization server is made of; the modules it is built from are injected. */
export interface TenantAuthorizationServerOptions {
  readonly tenantId: string;
  /** `${base}/t/{tenant}/oauth` (authorizationServerIssuer). */
  readonly issuer: string;
  /** The tenant's canonical MCP resource URI first, then its loopback aliases: the only `resource` values accepted. */
  readonly resources: readonly string[];
  /** The scopes offered to clients (besides `openid` and `offline_access`, always offered). */
  readonly scopes: readonly string[];
  readonly settings: AuthorizationServerSettings;
  /** Private RS256 JWKs; the first signs, every one is published (rotation). */
  readonly signingKeys: { readonly keys: readonly JWK[] };
  /** oidc-provider's storage per model (the store module: control plane SQL and Redis). */
  readonly adapter: (model: string) => Adapter;
  /** The signed-in account and its mapped claims (the store's account claims, written by the upstream sign-in). */
  readonly findAccount: FindAccount;
  /** The login and consent steps (the pages module). */
  readonly interactions: InteractionHandler;
  /**
   * The client trust and registration policy (the clients module): merged
   * over the defaults here, so it may set `features.clientIdMetadataDocument`,
   * `features.registration`, `fetch` and `extraClientMetadata`.
   */
  readonly clientPolicy?: Partial<Configuration>;
  /** Extension grants (the enterprise module's JWT bearer grant). */
  readonly grantTypes?: readonly GrantTypeRegistration[];
  /**
   * Called once with the created provider, before it serves a request: what
   * a module must set on the provider itself rather than in its
   * configuration (the clients module's attachClientPolicy).
   */
  readonly attachProvider?: (provider: Provider) => void;
  /**
   * The keys of its interaction and session cookies (ServerKeys.authorizationServerCookies):
   * the same on every replica, so a sign-in begun on one continues on another.
   */
  readonly cookieKeys: readonly (string | Buffer)[];
  /** Clients registered from the start (the tenant's admin sign-in). */
  readonly staticClients?: readonly StaticClient[];
  /** Resources besides the MCP endpoint (the tenant's admin API, for its admin sign-in). */
  readonly extraResources?: readonly ExtraResource[];
  readonly logger: Logger;
}

/** A tenant's running authorization server. */
export interface TenantAuthorizationServer {
  readonly tenantId: string;
  readonly issuer: string;
  /** Its verification keys: the tenant's resource server takes them inline (no HTTP fetch to itself). */
  readonly publicJwks: { readonly keys: readonly JWK[] };
  /** The oidc-provider instance (tests, and the admin's revocations through its models). */
  readonly provider: Provider;
  /**
   * Serves one request already routed to this tenant (routeAuthorizationServerRequest):
   * `providerUrl` is the path relative to the issuer. Reads the request body
   * itself: mount it where nothing has consumed the body.
   */
  handle(route: RoutedRequest, req: IncomingMessage, res: ServerResponse): void;
}

/** A request of this tenant's server, as request-routing.ts found it. */
export type RoutedRequest =
  { kind: 'provider'; url: string } | { kind: 'interaction'; uid: string } | { kind: 'callback' };

import { randomBytes } from 'node:crypto';
import type { Adapter, Configuration, KoaContextWithOIDC, errors as OidcErrors } from 'oidc-provider';
import type { JWK } from 'jose';
import { findDemoAccount } from './demo-account.js';
import { SIGNING_ALGORITHM } from './keystore.js';
import type { DevClient, ResourceIndex } from './resource-servers.js';
import { normalizeResource } from './resource-servers.js';
import { refusedRedirectUri } from './redirect-uri-policy.js';

/** Lifetime of an access token, from this server or from the token CLI: one hour, like most IdPs' default. */
export const ACCESS_TOKEN_TTL_SECONDS = 3600;

const DAY = 24 * 3600;

/** The OpenID Connect scopes this server knows besides the resources' own. */
const OIDC_SCOPES = ['openid', 'profile', 'offline_access'];

export interface ProviderConfigurationInput {
  /** The issuer's path (`/dev-idp`): the interaction URLs live under it. */
  mountPath: string;
  resources: ResourceIndex;
  /** Every scope a client may register and request: see knownScopes(). */
  scopes: string[];
  privateJwks: { keys: JWK[] };
  /** Clients registered from the start (the admin sign-in's). */
  clients: readonly DevClient[];
  adapter: (model: string) => Adapter;
  InvalidTarget: typeof OidcErrors.InvalidTarget;
  InvalidClientMetadata: typeof OidcErrors.InvalidClientMetadata;
}

/**
 * The scopes the server knows: OpenID Connect's and every resource's. The
 * resources' must be among them, not only in getResourceServerInfo: clients
 * register the scopes they will ask for (the MCP SDK sends the challenge's
 * `scope` plus offline_access in its RFC 7591 request), and oidc-provider
 * refuses registered scopes it does not know (invalid_client_metadata).
 */
export function knownScopes(resources: ResourceIndex): string[] {
  return [...new Set([...OIDC_SCOPES, ...[...resources.values()].flatMap((resource) => resource.scopes)])];
}

/**
 * The oidc-provider configuration: authorization code + PKCE S256 only,
 * resource indicators issuing RS256 JWT access tokens (RFC 9068) for the
 * configured resources only, open dynamic registration (RFC 7591), Client ID
 * Metadata Documents, refresh tokens for clients registered for them. Every
 * helper oidc-provider asks deployments to replace is replaced, so it prints
 * no advice at run time.
 */
export function providerConfiguration(input: ProviderConfigurationInput): Configuration {
  const { resources, InvalidTarget } = input;
  return {
    adapter: input.adapter,
    jwks: input.privateJwks,
    clients: input.clients.map((client) => ({
      client_id: client.clientId,
      redirect_uris: client.redirectUris,
      ...(client.clientSecret === undefined
        ? { token_endpoint_auth_method: 'none' }
        : { client_secret: client.clientSecret, token_endpoint_auth_method: 'client_secret_basic' }),
      grant_types: ['authorization_code'],
      response_types: ['code'],
    })),
    // Signs the short-lived interaction and session cookies only; a restart
    // ends sessions, which costs a redirect (sign-in is automatic).
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    findAccount: findDemoAccount,
    claims: { openid: ['sub'], profile: ['name'] },
    scopes: input.scopes,
    responseTypes: ['code'],
    // OAuth 2.1 §4.1.1: PKCE for every client, confidential ones included (S256 is the only method oidc-provider 9 offers).
    pkce: { required: () => true },
    clientDefaults: {
      grant_types: ['authorization_code'],
      response_types: ['code'],
      id_token_signed_response_alg: SIGNING_ALGORITHM,
    },
    interactions: {
      url: (_ctx: KoaContextWithOIDC, interaction) => `${input.mountPath}/interaction/${interaction.uid}`,
    },
    // MCP clients that run in a browser (MCP Inspector) call the token and
    // registration endpoints cross-origin; this server only listens on loopback.
    clientBasedCORS: () => true,
    // Checked on every client this server accepts: registered (RFC 7591) and metadata documents alike.
    extraClientMetadata: {
      properties: ['redirect_uris'],
      validator: (_ctx, key, value) => {
        if (key !== 'redirect_uris' || !Array.isArray(value)) return;
        const refused = value.find((uri: unknown) => typeof uri !== 'string' || refusedRedirectUri(uri) !== undefined);
        if (refused !== undefined) {
          // A description starting with "redirect_uris" makes oidc-provider answer RFC 7591 §3.2.2 invalid_redirect_uri.
          throw new input.InvalidClientMetadata(
            `redirect_uris: ${typeof refused === 'string' ? (refusedRedirectUri(refused) ?? '') : 'must be strings'}`,
          );
        }
      },
    },
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL_SECONDS,
      AuthorizationCode: 60,
      IdToken: 3600,
      Interaction: 600,
      RefreshToken: 14 * DAY,
      Session: 14 * DAY,
      Grant: 14 * DAY,
    },
    renderError: (ctx, out) => {
      // The browser lands here when a client sent a bad authorization request.
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = `Development authorization server: ${out.error}: ${out.error_description ?? ''}\n`;
    },
    features: {
      devInteractions: { enabled: false },
      // Loopback only and every visitor is the demo user: registration needs no initial access token.
      registration: { enabled: true },
      revocation: { enabled: true },
      clientIdMetadataDocument: { enabled: true, ack: 'draft-02' },
      resourceIndicators: {
        enabled: true,
        // MCP clients send `resource` on both requests (MCP authorization, "Resource Parameter
        // Implementation"); one that does not gets an OpenID token without an audience, not ours.
        defaultResource: () => undefined,
        // A refresh without `resource` keeps the audience the code was granted for.
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          const key = normalizeResource(indicator);
          const resource = key === undefined ? undefined : resources.get(key);
          if (resource === undefined) {
            throw new InvalidTarget(
              'this development server issues tokens only for the MCP endpoints of tenants that trust it',
            );
          }
          return {
            audience: resource.uri,
            scope: resource.scopes.join(' '),
            accessTokenFormat: 'jwt',
            accessTokenTTL: ACCESS_TOKEN_TTL_SECONDS,
            jwt: { sign: { alg: SIGNING_ALGORITHM } },
          };
        },
      },
    },
  };
}

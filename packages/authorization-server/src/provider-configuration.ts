import type { AuthorizationServerSettings } from '@mcpgw/config';
import type {
  Adapter,
  Configuration,
  FindAccount,
  KoaContextWithOIDC,
  RefreshToken,
  errors as OidcErrors,
} from 'oidc-provider';
import type { JWK } from 'jose';
import { accessTokenClaims } from './access-token-claims.js';
import type { StaticClient } from './authorization-server-options.js';
import { ENDPOINT_PATHS, INTERACTION_PATH } from './authorization-server-urls.js';
import { SIGNING_ALGORITHM } from './keystore-file.js';
import { refusedRedirectUri } from './redirect-uri-policy.js';
import type { ResourceIndex } from './resource-indicators.js';
import { normalizeResource } from './resource-indicators.js';

const DAY = 24 * 3600;

/** OAuth 2.1 section 4.1.2: a code lives briefly; 60 s is the design's bound (docs/adr/0011). */
export const AUTHORIZATION_CODE_TTL_SECONDS = 60;

/**
 * The scopes every hosted server offers besides the tenant's: `openid` (the
 * admin sign-in is OpenID Connect) and `offline_access`, which MCP clients may
 * add to ask for a refresh token (MCP 2026-07-28, Authorization, "Refresh Tokens").
 */
export const PROTOCOL_SCOPES = ['openid', 'offline_access'] as const;

export interface ProviderConfigurationInput {
  /** The issuer's path (`/t/{tenant}/oauth`): the interaction URLs live under it. */
  mountPath: string;
  resources: ResourceIndex;
  /** The tenant's offered scopes (without PROTOCOL_SCOPES). */
  scopes: readonly string[];
  settings: AuthorizationServerSettings;
  privateJwks: { keys: readonly JWK[] };
  staticClients: readonly StaticClient[];
  adapter: (model: string) => Adapter;
  findAccount: FindAccount;
  cookieKeys: readonly (string | Buffer)[];
  errors: Pick<typeof OidcErrors, 'InvalidTarget' | 'InvalidClientMetadata'>;
}

/**
 * A refresh token's remaining lifetime: its chain (every rotation keeps the
 * first token's `iiat`) ends `refreshTokenDays` after the sign-in, however
 * often it rotated, so a stolen and refreshed token cannot live forever.
 */
function refreshTokenTtl(days: number): (ctx: KoaContextWithOIDC, token: RefreshToken) => number {
  return (_ctx, token) => {
    const now = Math.floor(Date.now() / 1000);
    const start = typeof token.iiat === 'number' ? token.iiat : now;
    return Math.max(1, start + days * DAY - now);
  };
}

/**
 * The oidc-provider configuration of a tenant's hosted server:
 * - authorization code with PKCE S256 only (OAuth 2.1 section 4.1.1; S256 is the only method oidc-provider 9 offers);
 * - RFC 8707 resource indicators, required, bound to the tenant's resources: anything else is `invalid_target`;
 * - RFC 9068 JWT access tokens signed with the tenant's key, `accessTokenSeconds` long;
 * - refresh tokens rotated on every use; a reused one revokes its whole grant (OAuth 2.1 section 4.3.1);
 * - RFC 7009 revocation, RFC 7591 registration, Client ID Metadata Documents (open policy by default);
 * - `iss` in every authorization response (RFC 9207; oidc-provider always sends it and says so in metadata).
 * Every helper oidc-provider asks deployments to replace is replaced, so it prints no advice at run time.
 */
export function providerConfiguration(input: ProviderConfigurationInput): Configuration {
  const { resources, settings, errors } = input;
  const accessTokenTTL = settings.tokens.accessTokenSeconds;
  const refreshDays = settings.tokens.refreshTokenDays;
  const metadataDocuments = settings.clients.metadataDocuments;
  return {
    adapter: input.adapter,
    jwks: { keys: [...input.privateJwks.keys] },
    clients: input.staticClients.map((client) => ({
      client_id: client.clientId,
      redirect_uris: [...client.redirectUris],
      ...(client.clientSecret === undefined
        ? { token_endpoint_auth_method: 'none' }
        : { client_secret: client.clientSecret, token_endpoint_auth_method: 'client_secret_basic' }),
      grant_types: ['authorization_code'],
      response_types: ['code'],
    })),
    cookies: { keys: [...input.cookieKeys] },
    findAccount: input.findAccount,
    extraTokenClaims: accessTokenClaims(input.findAccount, settings.claims),
    claims: { openid: ['sub'] },
    scopes: [...new Set([...PROTOCOL_SCOPES, ...input.scopes])],
    responseTypes: ['code'],
    pkce: { required: () => true },
    clientDefaults: {
      grant_types: ['authorization_code'],
      response_types: ['code'],
      id_token_signed_response_alg: SIGNING_ALGORITHM,
    },
    routes: ENDPOINT_PATHS,
    interactions: {
      url: (_ctx: KoaContextWithOIDC, interaction) => `${input.mountPath}${INTERACTION_PATH}/${interaction.uid}`,
    },
    // MCP clients that run in a browser (MCP Inspector) call the token and
    // registration endpoints cross-origin; the gateway's request guard has
    // already refused an Origin it does not serve.
    clientBasedCORS: () => true,
    // Checked on every client: registered (RFC 7591) and metadata documents
    // alike. The clients module replaces it with the tenant's redirect rules.
    extraClientMetadata: {
      properties: ['redirect_uris'],
      validator: (_ctx, key, value) => {
        if (key !== 'redirect_uris' || !Array.isArray(value)) return;
        const refused = value.find((uri: unknown) => typeof uri !== 'string' || refusedRedirectUri(uri) !== undefined);
        if (refused !== undefined) {
          // A description starting with "redirect_uris" makes oidc-provider answer RFC 7591 section 3.2.2 invalid_redirect_uri.
          throw new errors.InvalidClientMetadata(
            `redirect_uris: ${typeof refused === 'string' ? (refusedRedirectUri(refused) ?? '') : 'must be strings'}`,
          );
        }
      },
    },
    // Whoever registered for refresh tokens gets one, `offline_access` or not: MCP clients rarely ask for it.
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // OAuth 2.1 section 4.3.1: a public client's refresh token is sender-constrained or rotated; ours rotate.
    rotateRefreshToken: true,
    ttl: {
      AccessToken: accessTokenTTL,
      AuthorizationCode: AUTHORIZATION_CODE_TTL_SECONDS,
      IdToken: accessTokenTTL,
      Interaction: 600,
      RefreshToken: refreshTokenTtl(refreshDays),
      Session: refreshDays * DAY,
      Grant: refreshDays * DAY,
    },
    renderError: (ctx, out) => {
      // The browser lands here when a client sent a bad authorization request.
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = `The sign-in cannot continue: ${out.error}: ${out.error_description ?? ''}\n`;
    },
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      registration: { enabled: settings.clients.registration.enabled },
      revocation: { enabled: true },
      // Open trust only: an allowlist needs the clients module's allowClient, and without it none is trusted.
      clientIdMetadataDocument: { enabled: metadataDocuments === 'open', ack: 'draft-02' },
      resourceIndicators: {
        enabled: true,
        // MCP clients send `resource` on both requests (MCP 2026-07-28, Authorization, "Resource Parameter
        // Implementation"). One that does not would get a token for no audience: refuse it instead.
        defaultResource: (_ctx, _client, oneOf) => {
          if (oneOf !== undefined) return oneOf;
          throw new errors.InvalidTarget('resource is required: the URL of the MCP server (RFC 8707 section 2)');
        },
        // A refresh without `resource` keeps the audience the code was granted for.
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          const key = normalizeResource(indicator);
          const resource = key === undefined ? undefined : resources.get(key);
          if (resource === undefined) {
            throw new errors.InvalidTarget('this authorization server issues tokens only for its own MCP server');
          }
          return {
            audience: resource.uri,
            scope: resource.scopes.join(' '),
            accessTokenFormat: 'jwt',
            accessTokenTTL,
            jwt: { sign: { alg: SIGNING_ALGORITHM } },
          };
        },
      },
    },
  };
}

/**
 * The tenant's client policy (the clients module) over the defaults: its
 * top-level keys replace, its `features` merge one feature at a time.
 */
export function withClientPolicy(base: Configuration, policy: Partial<Configuration> | undefined): Configuration {
  if (policy === undefined) return base;
  // The typings' feature unions cannot follow a spread; the merge keeps each feature's own shape.
  return { ...base, ...policy, features: { ...base.features, ...policy.features } as Configuration['features'] };
}

import type { AccessScope, EgressGuard, GatewayErrorCode, Logger, Principal } from '@mcpgw/core';
import { GatewayError } from '@mcpgw/core';
import type { IssuerEntry, TenantConfig } from '@mcpgw/config';
import type { AuthErrorCode, IssuerSettings, TokenVerifier, VerifierObserver } from '@mcpgw/auth';
import type { JWK } from 'jose';
import {
  AuthError,
  bearerChallenge,
  createTokenVerifier,
  extractBearerToken,
  principalFromClaims,
  protectedResourceMetadata,
} from '@mcpgw/auth';
import type { CompiledGrants } from '@mcpgw/policy';
import { compileGrants, resolveAccess } from '@mcpgw/policy';
import type { HostedIssuer } from './hosted-authorization-server.js';
import { hostedAuthorizationServerOf } from './hosted-authorization-server.js';
import { protectedResourceMetadataUrl, tenantResourceUri } from './public-url.js';

export type { HostedIssuer } from './hosted-authorization-server.js';

export interface AuthRequest {
  rawHeaders: readonly string[];
  url: string;
  /** The base URL the request addressed (one of the gateway's; see publicBaseUrls): its challenge points there. */
  baseUrl?: string;
}

/** Why a request was refused, for the logs: the RFC 6750 §3.1 error code, or `no_token` when none was sent. */
export type AuthRefusalReason = 'no_token' | 'invalid_request' | 'invalid_token' | 'insufficient_scope';

/** A refusal carries its registry error (status and JSON-RPC body), the `WWW-Authenticate` challenge and, for logs, its reason. */
export type AuthOutcome =
  | { ok: true; scope: AccessScope; principal: Principal }
  | {
      ok: false;
      error: GatewayError;
      challenge: string;
      reason: AuthRefusalReason;
      /** A verified caller refused for missing required scopes (the admin preview shows who). */
      principal?: Principal;
    };

/** What a verified principal may do: its resource set, or the required scopes it lacks (a 403). */
export type Admission = { ok: true; scope: AccessScope } | { ok: false; missingScopes: readonly string[] };

/** The RFC 6750 section 3.1 error code of each refusal (none when no credentials were sent). */
const OAUTH_ERROR = {
  MCPGW_AUTH_REQUIRED: undefined,
  MCPGW_TOKEN_INVALID: 'invalid_token',
  MCPGW_AUTH_REQUEST_INVALID: 'invalid_request',
  MCPGW_SCOPE_INSUFFICIENT: 'insufficient_scope',
} as const satisfies Partial<Record<GatewayErrorCode, AuthRefusalReason | undefined>>;

const FROM_AUTH_ERROR = {
  invalid_token: 'MCPGW_TOKEN_INVALID',
  invalid_request: 'MCPGW_AUTH_REQUEST_INVALID',
} as const satisfies Record<AuthErrorCode, keyof typeof OAUTH_ERROR>;

/**
 * One tenant's OAuth 2.1 resource-server front door (2026-07-28
 * basic/authorization): takes the bearer token, verifies it against the
 * tenant's own issuers, checks the tenant's required scopes, and resolves
 * the caller's resource set from the tenant's grants.
 */
export interface TenantAuthenticator {
  /** The canonical resource URI, `${PUBLIC_URL}/t/{tenant}/mcp`. */
  readonly resource: string;
  readonly metadataUrl: string;
  /** The RFC 9728 document served at `metadataUrl`. */
  readonly metadata: Record<string, unknown>;
  /**
   * The RFC 9728 document as fetched under `baseUrl`: its `resource` is the
   * URL the client used (section 3.3). Unknown bases get the canonical one.
   */
  metadataFor(baseUrl: string): Record<string, unknown>;
  authenticate(request: AuthRequest, signal: AbortSignal): Promise<AuthOutcome>;
  /**
   * The resource set this tenant's current configuration gives a caller
   * verified earlier (a listen stream outlives the request that opened it),
   * or undefined when the configuration no longer admits them: their issuer
   * is gone or a required scope was added. Token expiry is the caller's to watch.
   */
  accessOf(principal: Principal): AccessScope | undefined;
  /**
   * The step after verification that `authenticate` takes for every request:
   * the tenant's required scopes, then the caller's resource set from the
   * grants. The admin preview calls it with the principal it previews.
   */
  admit(principal: Principal): Admission;
  /** The tenant's grants as compiled at load (the ones `admit` resolves against). */
  readonly grants: CompiledGrants;
  /**
   * The principal a verified token with these claims would give, mapped by
   * the named issuer's claim settings (scope and groups claims), or by the
   * tenant's only issuer. Throws AuthError for malformed claims or an issuer
   * the tenant does not trust. No signature is involved: the admin preview's
   * "as these claims" only.
   */
  principalFromClaims(claims: Readonly<Record<string, unknown>>, issuer?: string): Principal;
  close(): void;
}

export function createTenantAuthenticator(
  tenant: TenantConfig,
  options: {
    baseUrl: string;
    /** The other base URLs the gateway answers as (loopback names of a loopback bind). */
    aliasBaseUrls?: readonly string[];
    /**
     * The tenant's hosted issuer and its current public keys, when it has a
     * hosted authorization server (hostedAuthorizationServerOf): trusted
     * first, with no fetch to itself.
     */
    hostedIssuer: HostedIssuer | undefined;
    /** The egress guard of each issuer's fetches: set for those a tenant admin wrote. */
    issuerEgress?: (entry: IssuerEntry) => EgressGuard | undefined;
    logger: Logger;
    /** Told about JWKS fetches and introspection calls (metrics). */
    verifierObserver?: VerifierObserver;
  },
): TenantAuthenticator {
  const auth = tenant.auth;
  if (auth === undefined) throw new Error(`tenant '${tenant.id}' does not authenticate`);
  const resource = tenantResourceUri(options.baseUrl, tenant.id);
  const metadataUrl = protectedResourceMetadataUrl(options.baseUrl, tenant.id);
  const aliases = (options.aliasBaseUrls ?? []).filter((base) => base !== options.baseUrl);
  // The same endpoint under another loopback name is the same resource: its tokens are accepted at either name.
  const aliasResources = aliases.map((base) => tenantResourceUri(base, tenant.id));
  const hosted = hostedAuthorizationServerOf(tenant) === undefined ? undefined : options.hostedIssuer;
  if (hostedAuthorizationServerOf(tenant) !== undefined && hosted === undefined) {
    throw new Error(`tenant '${tenant.id}' has a hosted authorization server, but its keys were not given`);
  }
  // The hosted issuer first (docs/adr/0011), then every other issuer; `{ "development": true }` is the hosted one.
  const configured = auth.issuers.filter(
    (entry): entry is Exclude<IssuerEntry, { development: true }> => !('development' in entry),
  );
  const issuers = [
    ...(hosted === undefined ? [] : [hostedIssuerSettings(hosted)]),
    ...configured.map((entry) => toIssuerSettings(entry, hosted, options.issuerEgress?.(entry))),
  ].map((settings) =>
    aliasResources.length === 0 ? settings : { ...settings, audiences: [...settings.audiences, ...aliasResources] },
  );
  const authorizationServers = [
    ...(hosted === undefined ? [] : [hosted.issuer]),
    ...configured.map((entry) => entry.authorizationServer ?? entry.issuer),
  ];
  // MCP 2026-07-28, Authorization, "Scope Selection Strategy": the scopes a client should request for basic
  // use; never `offline_access` ("Refresh Tokens": refresh tokens are not a resource requirement).
  const scopesSupported = (
    auth.scopesSupported ?? [
      ...new Set([...auth.requiredScopes, ...tenant.grants.flatMap((grant) => grant.match.scopes ?? [])]),
    ]
  ).filter((scope) => scope !== 'offline_access');
  // RFC 6750 section 3: the scope a client should request to be let in.
  const challengeScope =
    (auth.requiredScopes.length > 0 ? auth.requiredScopes : scopesSupported).join(' ') || undefined;
  const verifier: TokenVerifier = createTokenVerifier({
    resource,
    issuers,
    logger: options.logger,
    ...(options.verifierObserver === undefined ? {} : { observer: options.verifierObserver }),
  });
  // Once per tenant load: a request only runs the compiled URI matchers.
  const grants = compileGrants(tenant.grants);
  // The verifier hands back the same Principal object for as long as it keeps
  // the token; its scope (grant matching, canonical JSON, two hashes) is a
  // pure function of it, so it is worked out once and dropped with it.
  const scopes = new WeakMap<Principal, AccessScope>();
  const scopeOf = (principal: Principal): AccessScope => {
    let scope = scopes.get(principal);
    if (scope === undefined) {
      scope = resolveAccess(tenant.id, principal, grants);
      scopes.set(principal, scope);
    }
    return scope;
  };

  const admit = (principal: Principal): Admission => {
    const missingScopes = auth.requiredScopes.filter((scope) => !principal.scopes.includes(scope));
    return missingScopes.length > 0 ? { ok: false, missingScopes } : { ok: true, scope: scopeOf(principal) };
  };

  const documentFor = (base: string) =>
    protectedResourceMetadata({
      resource: tenantResourceUri(base, tenant.id),
      authorizationServers: [...new Set(authorizationServers)],
      scopesSupported,
      resourceName: tenant.name,
    });
  const metadata = documentFor(options.baseUrl);
  const documents = new Map([
    [options.baseUrl, metadata],
    ...aliases.map((base) => [base, documentFor(base)] as const),
  ]);

  const refuse = (
    base: string | undefined,
    code: keyof typeof OAUTH_ERROR,
    values: string | readonly string[] = [],
  ): AuthOutcome => {
    const error = new GatewayError(code, values);
    const oauthError = OAUTH_ERROR[code];
    return {
      ok: false,
      error,
      reason: oauthError ?? 'no_token',
      challenge: bearerChallenge({
        resourceMetadata:
          base !== undefined && documents.has(base) ? protectedResourceMetadataUrl(base, tenant.id) : metadataUrl,
        ...(challengeScope === undefined ? {} : { scope: challengeScope }),
        ...(oauthError === undefined ? {} : { error: oauthError, errorDescription: error.message }),
      }),
    };
  };

  return {
    resource,
    metadataUrl,
    metadata,
    metadataFor: (base) => documents.get(base) ?? metadata,
    async authenticate(request, signal) {
      try {
        const token = extractBearerToken({
          rawHeaders: request.rawHeaders as string[],
          url: request.url,
          bodyHasAccessToken: false,
        });
        // No credentials, or another scheme such as Basic: a challenge without
        // an error code (RFC 6750 section 3.1).
        if (token === undefined) return refuse(request.baseUrl, 'MCPGW_AUTH_REQUIRED');
        const principal = await verifier.verify(token, signal);
        const admission = admit(principal);
        if (!admission.ok) {
          return { ...refuse(request.baseUrl, 'MCPGW_SCOPE_INSUFFICIENT', auth.requiredScopes.join(' ')), principal };
        }
        return { ok: true, scope: admission.scope, principal };
      } catch (error) {
        if (error instanceof AuthError) return refuse(request.baseUrl, FROM_AUTH_ERROR[error.code], error.message);
        throw error;
      }
    },
    accessOf(principal) {
      if (!issuers.some((settings) => settings.issuer === principal.issuer)) return undefined;
      if (auth.requiredScopes.some((scope) => !principal.scopes.includes(scope))) return undefined;
      return scopeOf(principal);
    },
    admit,
    grants,
    principalFromClaims(claims, issuer) {
      const settings =
        issuer === undefined
          ? issuers.length === 1
            ? issuers[0]
            : undefined
          : issuers.find((entry) => entry.issuer === issuer);
      if (settings === undefined) {
        throw new AuthError(
          'invalid_request',
          issuer === undefined
            ? `The tenant trusts ${issuers.length} issuers: name one (${issuers.map((entry) => entry.issuer).join(', ')})`
            : `The tenant does not trust the issuer '${issuer}'`,
        );
      }
      const expiresAt = typeof claims.exp === 'number' ? claims.exp : Math.floor(Date.now() / 1000) + 300;
      return principalFromClaims(claims, settings, expiresAt);
    },
    close: () => verifier.close(),
  };
}

/**
 * The tenant's hosted issuer as the verifier takes it: its keys inline (no
 * fetch to itself), RFC 9068 access tokens only, `groups` as its access
 * tokens carry the mapped groups.
 */
export function hostedIssuerSettings(hosted: HostedIssuer): IssuerSettings {
  return {
    issuer: hosted.issuer,
    keys: { jwks: { keys: hosted.publicJwks.keys as JWK[] } },
    algorithms: ['RS256'],
    audiences: [],
    tokenTypes: ['at+jwt'],
    scopeClaim: 'scope',
    groupsClaim: 'groups',
    clockToleranceSeconds: 30,
  };
}

/**
 * A configured issuer as the verifier takes it (the admin API verifies tenant
 * admins' tokens with the same); `egress` guards its fetches. The development
 * issuer is the tenant's hosted one (`hosted`).
 */
export function toIssuerSettings(
  entry: IssuerEntry,
  hosted: HostedIssuer | undefined,
  egress?: EgressGuard,
): IssuerSettings {
  if ('development' in entry) {
    if (hosted === undefined) throw new Error("the tenant's hosted authorization server has no keys");
    return hostedIssuerSettings(hosted);
  }
  const keys: IssuerSettings['keys'] =
    entry.jwksUri !== undefined
      ? { jwksUri: entry.jwksUri }
      : entry.jwks !== undefined
        ? { jwks: { keys: entry.jwks.keys as JWK[] } }
        : entry.discovery === true
          ? { discovery: true }
          : undefined;
  return {
    issuer: entry.issuer,
    keys,
    algorithms: entry.algorithms,
    audiences: entry.audiences,
    tokenTypes: entry.tokenTypes,
    scopeClaim: entry.scopeClaim,
    ...(entry.groupsClaim === undefined ? {} : { groupsClaim: entry.groupsClaim }),
    clockToleranceSeconds: entry.clockToleranceSeconds,
    ...(entry.introspection === undefined ? {} : { introspection: entry.introspection }),
    ...(egress === undefined ? {} : { egress }),
  };
}

import type { AccessScope, Logger, Principal } from '@mcpgw/core';
import type { IssuerEntry, TenantConfig } from '@mcpgw/config';
import type { IssuerSettings, TokenVerifier } from '@mcpgw/auth';
import type { JWK } from 'jose';
import {
  AuthError,
  bearerChallenge,
  createTokenVerifier,
  extractBearerToken,
  protectedResourceMetadata,
} from '@mcpgw/auth';
import { compileGrants, resolveAccess } from '@mcpgw/policy';
import { protectedResourceMetadataUrl, tenantResourceUri } from './public-url.js';

/** The built-in development issuer, as the verifier sees it: pinned keys, no fetch. */
export interface DevelopmentIssuer {
  issuer: string;
  publicJwks: { keys: readonly object[] };
}

export interface AuthRequest {
  rawHeaders: readonly string[];
  url: string;
}

export type AuthOutcome =
  { ok: true; scope: AccessScope } | { ok: false; status: 400 | 401 | 403; challenge: string; message: string };

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
  authenticate(request: AuthRequest, signal: AbortSignal): Promise<AuthOutcome>;
  close(): void;
}

export function createTenantAuthenticator(
  tenant: TenantConfig,
  options: { baseUrl: string; development: DevelopmentIssuer | undefined; logger: Logger },
): TenantAuthenticator {
  const auth = tenant.auth;
  if (auth === undefined) throw new Error(`tenant '${tenant.id}' does not authenticate`);
  const resource = tenantResourceUri(options.baseUrl, tenant.id);
  const metadataUrl = protectedResourceMetadataUrl(options.baseUrl, tenant.id);
  const issuers = auth.issuers.map((entry) => toIssuerSettings(entry, options.development));
  const authorizationServers = auth.issuers.map((entry) =>
    'development' in entry ? options.development!.issuer : (entry.authorizationServer ?? entry.issuer),
  );
  const scopesSupported = auth.scopesSupported ?? [
    ...new Set([...auth.requiredScopes, ...tenant.grants.flatMap((grant) => grant.match.scopes ?? [])]),
  ];
  // RFC 6750 section 3: the scope a client should request to be let in.
  const challengeScope =
    (auth.requiredScopes.length > 0 ? auth.requiredScopes : scopesSupported).join(' ') || undefined;
  const verifier: TokenVerifier = createTokenVerifier({ resource, issuers, logger: options.logger });
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

  const refuse = (
    status: 400 | 401 | 403,
    error: 'invalid_request' | 'invalid_token' | 'insufficient_scope' | undefined,
    message: string,
  ): AuthOutcome => ({
    ok: false,
    status,
    message,
    challenge: bearerChallenge({
      resourceMetadata: metadataUrl,
      ...(challengeScope === undefined ? {} : { scope: challengeScope }),
      ...(error === undefined ? {} : { error, errorDescription: message }),
    }),
  });

  return {
    resource,
    metadataUrl,
    metadata: protectedResourceMetadata({
      resource,
      authorizationServers: [...new Set(authorizationServers)],
      scopesSupported,
      resourceName: tenant.name,
    }),
    async authenticate(request, signal) {
      try {
        const token = extractBearerToken({
          rawHeaders: request.rawHeaders as string[],
          url: request.url,
          bodyHasAccessToken: false,
        });
        // No credentials, or another scheme such as Basic: a challenge without
        // an error code (RFC 6750 section 3.1).
        if (token === undefined)
          return refuse(
            401,
            undefined,
            'Authentication required: send an OAuth access token in the Authorization header (Bearer scheme)',
          );
        const principal = await verifier.verify(token, signal);
        const missing = auth.requiredScopes.filter((scope) => !principal.scopes.includes(scope));
        if (missing.length > 0) {
          return refuse(
            403,
            'insufficient_scope',
            `The access token lacks the required scope: ${auth.requiredScopes.join(' ')}`,
          );
        }
        return { ok: true, scope: scopeOf(principal) };
      } catch (error) {
        if (error instanceof AuthError) return refuse(error.status, error.code, error.message);
        throw error;
      }
    },
    close: () => verifier.close(),
  };
}

function toIssuerSettings(entry: IssuerEntry, development: DevelopmentIssuer | undefined): IssuerSettings {
  if ('development' in entry) {
    if (development === undefined) throw new Error('the development issuer is not running');
    return {
      issuer: development.issuer,
      keys: { jwks: { keys: development.publicJwks.keys as JWK[] } },
      algorithms: ['RS256', 'ES256', 'PS256', 'EdDSA'],
      audiences: [],
      tokenTypes: ['at+jwt'],
      scopeClaim: 'scope',
      clockToleranceSeconds: 30,
    };
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
  };
}

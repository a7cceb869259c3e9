import type { ControlPlaneStore } from '@mcpgw/control-plane';
import type { EnvConfig, IssuerEntry, TenantConfig } from '@mcpgw/config';
import type { Logger, Principal } from '@mcpgw/core';
import type { IssuerSettings, TokenVerifier } from '@mcpgw/auth';
import { AuthError, bearerChallenge, createTokenVerifier } from '@mcpgw/auth';
import type { JWK } from 'jose';
import { decodeJwt } from 'jose';
import type { AdminCredential, AdminPrincipal } from './admin-principal.js';
import {
  adminResourceMetadataUrl,
  operatorResource,
  tenantAdminResource,
  tenantOfAdminResource,
} from './admin-resources.js';
import { AdminProblem } from './problem.js';
import { matchesBinding } from './role-bindings.js';
import type { ServingTenants } from './tenant-ports.js';
import type { HostedIssuer } from '@mcpgw/tenancy';
import { hostedIssuerSettings } from '@mcpgw/tenancy';

/** The local operator issuer of a loopback development gateway (`npm run token -- --operator`): its issuer and pinned public keys. */
export interface LocalOperatorIssuer {
  readonly issuer: string;
  readonly publicJwks: { readonly keys: readonly object[] };
}

/** What admin access needs of a tenant's serving runtime: its configuration (issuers) and its hosted issuer. */
export interface AccessTenantRuntime {
  readonly config: TenantConfig;
  /** The tenant's hosted issuer, trusted first; `{ "development": true }` names it in issuers and role bindings. */
  readonly hostedIssuer?: HostedIssuer | undefined;
}

export interface AdminAccessOptions<R extends AccessTenantRuntime = AccessTenantRuntime> {
  readonly env: EnvConfig;
  /** The canonical base URL, then the loopback aliases (publicBaseUrls). */
  readonly baseUrls: readonly [string, ...string[]];
  readonly tenants: ServingTenants<R>;
  /** The verifier settings of one of a tenant's issuers, as its MCP endpoint verifies them (keys, egress). */
  readonly issuerSettings: (entry: IssuerEntry, runtime: R) => IssuerSettings;
  readonly store: ControlPlaneStore;
  /**
   * The local operator issuer, when this gateway takes one: no OPERATOR_ISSUER
   * and a loopback bind with a demo login running (docs/admin-api.md).
   */
  readonly localOperator: LocalOperatorIssuer | undefined;
  readonly logger: Logger;
}

/** Turns admin access tokens into admin principals, with the gateway's one token verifier. */
export interface AdminAccess {
  /**
   * The admin principal of `accessToken`, or a thrown {@link AdminProblem}:
   * 401 for a token nobody here accepts, 403 for a valid token carrying no
   * admin role. `tenantId` (the tenant a request addresses) is only a hint,
   * used for opaque tokens, which name no audience: a JWT is routed by its
   * own `aud`, and verified by the issuers of the tenant that names.
   */
  authenticate(tenantId: string | undefined, accessToken: string, via: AdminCredential): Promise<AdminPrincipal>;
  /**
   * Same, for the browser sign-in (`via: 'session'`): undefined when the token
   * is not accepted, instead of a problem.
   */
  resolveAdminPrincipal(tenantId: string | undefined, accessToken: string): Promise<AdminPrincipal | undefined>;
  /**
   * The browser sign-in's resolver: like `resolveAdminPrincipal`, plus the
   * token's verified scopes and groups, which the session carries so that
   * every later request is checked against the tenant's current bindings
   * ({@link AdminAccess.recheckSession}). Bounded: when they are many, only
   * those some binding of the tenant names at sign-in are kept. `binding`
   * names the role binding that admitted them: deleting it ends the session.
   */
  resolveSessionAdmin(tenantId: string, accessToken: string): Promise<SignedInAdmin | undefined>;
  /**
   * Re-checks a signed-in person on each request, as a bearer token is: their
   * issuer must still be one of the tenant's (else 401: sign in again) and
   * some current admin role binding must still match them (else the bearer
   * path's 403 `forbidden`). Throws an {@link AdminProblem}.
   */
  recheckSession(tenantId: string, who: SessionAdmin): Promise<void>;
  /** The WWW-Authenticate challenge of a 401 (RFC 6750 section 3, RFC 9728 section 5.1). */
  challenge(
    tenantId: string | undefined,
    error?: { code: 'invalid_token' | 'invalid_request'; description: string },
  ): string;
  /** The resource operators' tokens name; undefined when no operator issuer is configured. */
  readonly operatorAudience: string | undefined;
  /**
   * Who issues operator tokens: OPERATOR_ISSUER, else on a loopback bind the
   * local operator issuer; undefined when nobody does.
   */
  readonly operatorIssuer: string | undefined;
  close(): void;
}

/** A tenant admin as a session remembers them: who, and what their token carried at sign-in. */
export interface SessionAdmin {
  readonly principal: Extract<AdminPrincipal, { kind: 'tenant-admin' }>;
  readonly scopes: readonly string[];
  readonly groups: readonly string[];
}

/** A tenant admin at sign-in: also the role binding that admitted them, which the session's record names. */
export interface SignedInAdmin extends SessionAdmin {
  readonly binding: string;
}

/** Above this many characters of scopes and groups, a session keeps only those the bindings name (a cookie holds 4096 bytes). */
const MAX_SESSION_CLAIMS_CHARS = 1500;

const unauthenticated = (access: AdminAccess, tenantId: string | undefined, description: string): AdminProblem =>
  new AdminProblem('unauthenticated', description, [], {
    'www-authenticate': access.challenge(tenantId, { code: 'invalid_token', description }),
  });

const listOf = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];

/** `aud` as a list; a JWT may carry one string or an array (RFC 7519 section 4.1.3). */
function audiences(claims: Record<string, unknown>): string[] {
  const aud = claims.aud;
  if (typeof aud === 'string') return [aud];
  return Array.isArray(aud) ? aud.filter((item): item is string => typeof item === 'string') : [];
}

export function createAdminAccess<R extends AccessTenantRuntime>(options: AdminAccessOptions<R>): AdminAccess {
  const { env, baseUrls, tenants, store } = options;
  const [baseUrl] = baseUrls;
  const logger = options.logger.child({ component: 'admin-auth' });
  // The operator's own identity provider (OPERATOR_ISSUER); without one, on a
  // loopback bind, the local operator issuer (`npm run token -- --operator`), with its pinned keys.
  const localOperator = env.OPERATOR_ISSUER === undefined ? options.localOperator : undefined;
  const operatorIssuer = env.OPERATOR_ISSUER ?? localOperator?.issuer;
  const operatorAudience =
    operatorIssuer === undefined ? undefined : (env.OPERATOR_AUDIENCE ?? operatorResource(baseUrl));
  const operatorKeys = (): IssuerSettings['keys'] =>
    env.OPERATOR_ISSUER === undefined
      ? { jwks: { keys: localOperator!.publicJwks.keys as JWK[] } }
      : env.OPERATOR_JWKS_URI === undefined
        ? { discovery: true }
        : { jwksUri: env.OPERATOR_JWKS_URI };
  const operatorVerifier: TokenVerifier | undefined =
    operatorIssuer === undefined || operatorAudience === undefined
      ? undefined
      : createTokenVerifier({
          resource: operatorAudience,
          logger,
          issuers: [
            {
              issuer: operatorIssuer,
              keys: operatorKeys(),
              algorithms: ['RS256', 'PS256', 'ES256', 'EdDSA'],
              audiences: [],
              // RFC 9068 section 4: access tokens only, never ID tokens.
              tokenTypes: ['at+jwt'],
              scopeClaim: 'scope',
              groupsClaim: env.OPERATOR_ROLE_CLAIM,
              clockToleranceSeconds: 30,
            },
          ],
        });

  // One verifier per serving runtime, so a change of the tenant's issuers takes effect with its runtime.
  const verifiers = new Map<string, { runtime: R; verifier: TokenVerifier }>();
  const tenantVerifier = (tenantId: string): TokenVerifier | undefined => {
    const runtime = tenants.serving.get(tenantId);
    const cached = verifiers.get(tenantId);
    if (cached !== undefined && cached.runtime !== runtime) {
      cached.verifier.close();
      verifiers.delete(tenantId);
    }
    if (runtime?.config.auth === undefined) return undefined;
    if (cached !== undefined && cached.runtime === runtime) return cached.verifier;
    const resources = baseUrls.map((base) => tenantAdminResource(base, tenantId));
    const verifier = createTokenVerifier({
      resource: resources[0] as string,
      logger: logger.child({ tenant: tenantId }),
      // The tenant's own identity providers, with their extra MCP audiences
      // dropped: an admin token must name this tenant's admin resource.
      issuers: [
        ...(runtime.hostedIssuer === undefined ? [] : [hostedIssuerSettings(runtime.hostedIssuer)]),
        ...runtime.config.auth.issuers
          .filter((entry) => !('development' in entry))
          .map((entry) => options.issuerSettings(entry, runtime)),
      ].map((settings) => ({ ...settings, audiences: resources.slice(1) })),
    });
    verifiers.set(tenantId, { runtime, verifier });
    return verifier;
  };

  const verify = async (verifier: TokenVerifier, token: string, tenantId: string | undefined): Promise<Principal> => {
    try {
      return await verifier.verify(token, AbortSignal.timeout(10_000));
    } catch (error) {
      if (error instanceof AuthError) throw unauthenticated(access, tenantId, error.message);
      throw error;
    }
  };

  /**
   * The bearer path's and the session's one admin check: some current binding
   * of the tenant matches the caller. Returns the first that does (its name).
   */
  const requireBinding = async (
    tenantId: string,
    principal: Pick<Principal, 'issuer' | 'subject' | 'scopes' | 'groups'>,
    refusal: string,
  ): Promise<string> => {
    const bindings = await store.listEntities(tenantId, 'admin-role-binding');
    const devIssuer = tenants.serving.get(tenantId)?.hostedIssuer?.issuer;
    const binding = bindings.find((candidate) => matchesBinding(candidate.document, principal, devIssuer));
    if (binding === undefined) throw new AdminProblem('forbidden', refusal);
    return binding.name;
  };

  const access: AdminAccess = {
    operatorAudience,
    operatorIssuer,

    async authenticate(hint, token, via) {
      let claims: Record<string, unknown> | undefined;
      try {
        claims = decodeJwt(token);
      } catch {
        claims = undefined; // opaque: only the addressed tenant's introspection can tell
      }
      const aud = claims === undefined ? [] : audiences(claims);
      if (operatorVerifier !== undefined && claims?.iss === operatorIssuer && aud.includes(operatorAudience!)) {
        const principal = await verify(operatorVerifier, token, hint);
        if (!principal.groups.includes(env.OPERATOR_ROLE)) {
          throw new AdminProblem(
            'forbidden',
            `The token does not carry the operator role in "${env.OPERATOR_ROLE_CLAIM}"`,
          );
        }
        return { kind: 'operator', issuer: principal.issuer, subject: principal.subject, via };
      }
      const tenantId =
        claims === undefined
          ? hint
          : aud.map((item) => tenantOfAdminResource(item, baseUrls)).find((id) => id !== undefined);
      if (tenantId === undefined) {
        throw unauthenticated(
          access,
          hint,
          'The token is not meant for this admin API (its aud names no admin resource)',
        );
      }
      const verifier = tenantVerifier(tenantId);
      // A tenant that is not served (missing, suspended) has no issuers to trust: the same 401 as a bad token.
      if (verifier === undefined) throw unauthenticated(access, hint, 'The token cannot be verified');
      const principal = await verify(verifier, token, hint);
      await requireBinding(tenantId, principal, 'The token carries none of the admin roles this tenant grants');
      return { kind: 'tenant-admin', tenantId, issuer: principal.issuer, subject: principal.subject, via };
    },

    async resolveSessionAdmin(tenantId, token) {
      const verifier = tenantVerifier(tenantId);
      if (verifier === undefined) return undefined;
      let principal: Principal;
      let binding: string;
      try {
        principal = await verify(verifier, token, tenantId);
        binding = await requireBinding(tenantId, principal, 'not an admin');
      } catch (error) {
        if (error instanceof AdminProblem) return undefined;
        throw error;
      }
      let { scopes, groups } = principal;
      if (JSON.stringify([scopes, groups]).length > MAX_SESSION_CLAIMS_CHARS) {
        const named = (await store.listEntities(tenantId, 'admin-role-binding')).flatMap(({ document }) => [
          ...listOf(document.scopes),
          ...listOf(document.groups),
        ]);
        scopes = scopes.filter((scope) => named.includes(scope));
        groups = groups.filter((group) => named.includes(group));
      }
      return {
        principal: {
          kind: 'tenant-admin',
          tenantId,
          issuer: principal.issuer,
          subject: principal.subject,
          via: 'session',
        },
        scopes,
        groups,
        binding,
      };
    },

    async recheckSession(tenantId, who) {
      const runtime = tenants.serving.get(tenantId);
      const issuers = runtime?.config.auth?.issuers ?? [];
      const hostedIssuer = runtime?.hostedIssuer?.issuer;
      const trusted = [hostedIssuer, ...issuers.map((entry) => ('development' in entry ? hostedIssuer : entry.issuer))];
      if (!trusted.includes(who.principal.issuer)) {
        throw unauthenticated(
          access,
          tenantId,
          'The session was signed in with an issuer this tenant no longer trusts',
        );
      }
      const { issuer, subject } = who.principal;
      await requireBinding(
        tenantId,
        { issuer, subject, scopes: who.scopes, groups: who.groups },
        'The signed-in account no longer holds any of the admin roles this tenant grants',
      );
    },

    async resolveAdminPrincipal(tenantId, token) {
      try {
        return await access.authenticate(tenantId, token, 'session');
      } catch (error) {
        if (error instanceof AdminProblem) return undefined;
        throw error;
      }
    },

    challenge(tenantId, error) {
      const resource =
        tenantId !== undefined
          ? tenantAdminResource(baseUrl, tenantId)
          : (operatorAudience ?? operatorResource(baseUrl));
      return bearerChallenge({
        resourceMetadata: adminResourceMetadataUrl(baseUrl, resource),
        ...(error === undefined ? {} : { error: error.code, errorDescription: error.description }),
      });
    },

    close() {
      operatorVerifier?.close();
      for (const { verifier } of verifiers.values()) verifier.close();
      verifiers.clear();
    },
  };
  return access;
}

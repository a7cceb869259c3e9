import type { GatewayCache } from '@mcpgw/cache';
import type { GatewayConfig } from '@mcpgw/config';
import type { EgressGuard, Logger, Principal, ServerKeys, SourceFactory } from '@mcpgw/core';
import type { FastifyInstance } from 'fastify';
import { createAdminSessionRows } from '@mcpgw/control-plane';
import type { ControlPlane, PinnedDevAuthorizationServer, TenantRegistry, TenantRuntime } from '@mcpgw/tenancy';
import type { AdminAccess } from './admin-access.js';
import { createAdminAccess } from './admin-access.js';
import { registerAdminMetadataRoutes } from './admin-metadata-routes.js';
import { adminPlugin } from './admin-plugin.js';
import type { AdminAuthenticator } from './admin-principal.js';
import { ADMIN_PREFIX } from './admin-resources.js';
import type { AdminRoute } from './admin-route.js';
import { adminRouteTable } from './admin-routes.js';
import { createBearerAuthenticator } from './bearer-authenticator.js';
import { AdminProblem, problemBody, tenantNotFound } from './problem.js';
import { createAdminSignIn } from './sign-in/admin-sign-in.js';
import type { ProblemError } from './sign-in/sign-in-problem.js';
import { SignInProblem } from './sign-in/sign-in-problem.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Admin token verification (bearer and browser sessions); absent when the admin API is off. */
    adminAccess: AdminAccess | undefined;
  }
}

/** How buildApp's caller shapes the admin API (docs/admin-api.md). */
export interface AdminApiOptions {
  /** Routes of other modules, served and documented beside the built-in ones. */
  readonly routes?: readonly AdminRoute[];
  /** Authenticators asked after the bearer one (e.g. a browser session), given the token resolver. */
  readonly authenticators?: (access: AdminAccess) => readonly AdminAuthenticator[];
}

export interface AdminApiContext {
  readonly config: GatewayConfig;
  readonly controlPlane: ControlPlane;
  readonly tenants: TenantRegistry<TenantRuntime>;
  readonly cache: GatewayCache;
  readonly registry: ReadonlyMap<string, SourceFactory>;
  /** publicBaseUrls: the canonical one first. */
  readonly baseUrls: readonly [string, ...string[]];
  /** The base URL a request's Host names (one of `baseUrls`, else the canonical one). */
  readonly baseUrlOf: (host: string | undefined) => string;
  /** The keys derived from SECRETS_KEY (else from this process's random secret). */
  readonly keys: ServerKeys;
  /** A caller's fingerprint within a tenant: the preview names the previewed caller with it. */
  readonly tenantFingerprint: (tenantId: string, principal: Principal) => string;
  readonly devAuthorizationServer: PinnedDevAuthorizationServer | undefined;
  /** The egress policy the connection test holds tenant admins' sources to. */
  readonly egress: EgressGuard;
  readonly logger: Logger;
}

/** An admin API refusal as the sign-in routes throw it: the same bytes on every path. */
function asProblemError(problem: AdminProblem): ProblemError {
  return Object.assign(new Error(problem.detail), { statusCode: problem.status, problem: problemBody(problem) });
}

/** The admin API's missing-tenant answer as the sign-in routes throw it. */
function adminTenantNotFound(): ProblemError {
  return asProblemError(tenantNotFound());
}

/**
 * Serves `/admin/v1`, the admin resources' metadata and the tenants' browser
 * sign-in (docs/admin-sign-in.md); closes its verifiers with the app. Callers
 * are recognised by bearer token first, then by session cookie, then by what
 * `options.authenticators` adds; a state-changing request carried by a
 * session cookie is refused before its body is read unless it passes the
 * CSRF check.
 */
export async function installAdminApi(
  app: FastifyInstance,
  context: AdminApiContext,
  options: AdminApiOptions,
): Promise<void> {
  const { config, baseUrls } = context;
  const logger = context.logger.child({ component: 'admin' });
  const access = createAdminAccess({
    env: config.env,
    baseUrls,
    tenants: context.tenants,
    store: context.controlPlane.store,
    devAuthorizationServer: context.devAuthorizationServer,
    logger,
  });
  app.decorate('adminAccess', access);
  app.addHook('onClose', async () => access.close());
  registerAdminMetadataRoutes(app, {
    baseUrl: baseUrls[0],
    tenants: context.tenants,
    operator:
      access.operatorIssuer === undefined || access.operatorAudience === undefined
        ? undefined
        : { issuer: access.operatorIssuer, audience: access.operatorAudience },
    devAuthorizationServer: context.devAuthorizationServer,
  });
  const signIn = createAdminSignIn({
    tenants: context.tenants.serving,
    publicBaseUrl: baseUrls[0],
    baseUrlOf: context.baseUrlOf,
    secrets: context.keys.adminSession,
    resolveAdmin: (tenantId, accessToken) => access.resolveSessionAdmin(tenantId, accessToken),
    // A binding no longer matching: the admin API's own 403 `forbidden`, as for a bearer token no
    // binding names, on the sign-in's routes (GET .../session) as on the admin API's. An issuer
    // the tenant no longer trusts: the session's 401 `session-invalid`, sign in again.
    recheckAdmin: (session) =>
      access.recheckSession(session.tenantId, session).catch((error: unknown) => {
        if (!(error instanceof AdminProblem)) throw error;
        if (error.type === 'unauthenticated')
          throw new SignInProblem('session-invalid', `${error.detail}: sign in again.`);
        throw asProblemError(error);
      }),
    sessions: createAdminSessionRows(context.controlPlane.db),
    rateLimits: app.limits.rateLimits,
    devIssuer: context.devAuthorizationServer?.issuer,
    tenantNotFound: adminTenantNotFound,
  });
  await signIn.register(app);
  app.addHook('onRequest', async (request, reply) => {
    if (request.url.startsWith(`${ADMIN_PREFIX}/tenants/`)) return signIn.session.csrfGuard(request, reply);
    return undefined;
  });
  await app.register(adminPlugin, {
    prefix: ADMIN_PREFIX,
    deps: {
      store: context.controlPlane.store,
      tenants: context.tenants,
      cache: context.cache,
      validateTenant: config.validateTenant,
      sourceFactories: context.registry,
      configDir: config.configDir,
      egress: context.egress,
      logger,
      tenantFingerprint: context.tenantFingerprint,
    },
    table: adminRouteTable(baseUrls[0], options.routes),
    authenticators: [
      createBearerAuthenticator(access),
      signIn.session.authenticator,
      ...(options.authenticators?.(access) ?? []),
    ],
    challenge: (tenantId) => access.challenge(tenantId),
    rateLimits: app.limits.rateLimits,
    principalKeySecret: context.keys.adminPrincipalCounter,
  });
}

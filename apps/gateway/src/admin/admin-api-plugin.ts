import fastifyPlugin from 'fastify-plugin';
import { createAdminSessionRows, createOperatorSessionRows } from '@mcpgw/control-plane';
import { createTenantPrincipalFingerprint, toIssuerSettings } from '@mcpgw/tenancy';
import type { AdminAccess, AuthorizationRecords } from '@mcpgw/admin';
import { ADMIN_PREFIX, AdminProblem, createAdminAccess, problemBody, tenantNotFound } from '@mcpgw/admin';
import { loadOrCreateKeystore } from '@mcpgw/authorization-server';
import { localOperator, localOperatorKeystorePath } from '../local-issuers.js';
import { registerAdminMetadataRoutes } from './admin-metadata-routes.js';
import { adminPlugin } from './admin-plugin.js';
import { consolePlugin } from './console/console-plugin.js';
import type { AdminAuthenticator } from './admin-authenticator.js';
import type { AdminRoute } from './admin-route.js';
import { adminRouteTable } from './admin-routes.js';
import { createBearerAuthenticator } from './bearer-authenticator.js';
import { createAdminSignIn } from './sign-in/admin-sign-in.js';
import { createOperatorSignIn, operatorIssuerSignIn } from './sign-in/operator-sign-in.js';
import { mintOperatorToken } from '../token-cli.js';
import type { ProblemError } from './sign-in/sign-in-problem.js';
import { SignInProblem } from './sign-in/sign-in-problem.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Admin token verification (bearer and browser sessions); absent when the admin API is off. */
    adminAccess: AdminAccess | undefined;
  }
}

export interface AdminApiPluginOptions {
  /** Serve the admin API (docs/admin-api.md); absent: it is off (`app.adminAccess` undefined). */
  admin?: AdminApiOptions | undefined;
}

/** How buildApp's caller shapes the admin API (docs/admin-api.md). */
export interface AdminApiOptions {
  /** Routes of other modules, served and documented beside the built-in ones. */
  readonly routes?: readonly AdminRoute[];
  /** Authenticators asked after the bearer one (e.g. a browser session), given the token resolver. */
  readonly authenticators?: (access: AdminAccess) => readonly AdminAuthenticator[];
  /**
   * The tenants' hosted authorization server records, for the routes that
   * list and revoke connected clients and users' grants; absent: those
   * routes answer 404.
   */
  readonly authorizationRecords?: AuthorizationRecords;
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
export const adminApiPlugin = fastifyPlugin<AdminApiPluginOptions>(
  async (app, { admin: options }) => {
    if (options === undefined) {
      app.decorate('adminAccess', undefined);
      return;
    }
    const { config, baseUrls, keys, sourceFactories, egress, baseUrlOf } = app.settings;
    const { controlPlane, tenants } = app;
    const operator = localOperator(config, baseUrls[0]);
    const localOperatorIssuer =
      operator === undefined
        ? undefined
        : {
            issuer: operator.issuer,
            publicJwks: (await loadOrCreateKeystore(localOperatorKeystorePath(config))).publicJwks,
          };
    const cache = app.gatewayCache;
    const tenantFingerprint = createTenantPrincipalFingerprint(keys.tenantPrincipalFingerprint);
    const logger = app.settings.logger.child({ component: 'admin' });
    const access = createAdminAccess({
      env: config.env,
      baseUrls,
      tenants: tenants,
      // An admin token is verified by the tenant's issuers exactly as its MCP endpoint verifies them.
      issuerSettings: (entry, runtime) => toIssuerSettings(entry, runtime.hostedIssuer, runtime.issuerEgress(entry)),
      store: controlPlane.store,
      localOperator: localOperatorIssuer,
      logger,
    });
    app.decorate('adminAccess', access);
    app.addHook('onClose', async () => access.close());
    registerAdminMetadataRoutes(app, {
      baseUrl: baseUrls[0],
      tenants: tenants,
      operator:
        access.operatorIssuer === undefined || access.operatorAudience === undefined
          ? undefined
          : { issuer: access.operatorIssuer, audience: access.operatorAudience },
    });
    const signIn = createAdminSignIn({
      tenants: tenants.serving,
      publicBaseUrl: baseUrls[0],
      baseUrlOf: baseUrlOf,
      secrets: keys.adminSession,
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
      sessions: createAdminSessionRows(controlPlane.db),
      rateLimits: app.limits.rateLimits,
      tenantNotFound: adminTenantNotFound,
    });
    await signIn.register(app);
    app.addHook('onRequest', async (request, reply) => {
      if (request.url.startsWith(`${ADMIN_PREFIX}/tenants/`)) return signIn.session.csrfGuard(request, reply);
      return undefined;
    });
    const deps = {
      store: controlPlane.store,
      tenants: tenants,
      cache: cache,
      validateTenant: config.validateTenant,
      sourceFactories: sourceFactories,
      configDir: config.configDir,
      egress: egress,
      logger,
      tenantFingerprint: tenantFingerprint,
      authorizationRecords: options.authorizationRecords,
    };
    const table = adminRouteTable(baseUrls[0], options.routes);
    const bearer = createBearerAuthenticator(access);
    await app.register(adminPlugin, {
      prefix: ADMIN_PREFIX,
      deps,
      table,
      authenticators: [bearer, signIn.session.authenticator, ...(options.authenticators?.(access) ?? [])],
      challenge: (tenantId) => access.challenge(tenantId),
      rateLimits: app.limits.rateLimits,
      principalKeySecret: keys.adminPrincipalCounter,
    });
    // The console's pages run the same table's operations (console/console-plugin.ts).
    await app.register(consolePlugin, {
      deps: { ...deps, routes: () => table.list() },
      bearer,
      session: signIn.session,
      signIn: signIn.console,
      operatorSignIn: createOperatorSignIn({
        secrets: keys.adminSession,
        secure: new URL(baseUrls[0]).protocol === 'https:',
        originOf: signIn.console.originOf,
        peerIsClient: config.env.TRUSTED_PROXIES.length === 0,
        mintLocalOperatorToken:
          operator === undefined
            ? undefined
            : async () => (await mintOperatorToken(config, { sub: 'local-operator' })).token,
        operatorIssuer: operatorIssuerSignIn(config.env, access, {
          baseUrlOf,
          secure: new URL(baseUrls[0]).protocol === 'https:',
        }),
        resolve: (token) => access.resolveAdminPrincipal(undefined, token),
        sessions: createOperatorSessionRows(controlPlane.db),
      }),
      rateLimits: app.limits.rateLimits,
    });
  },
  {
    name: 'mcpgw-admin-api',
    dependencies: [
      'mcpgw-settings',
      'mcpgw-cache',
      'mcpgw-tenants',
      'mcpgw-limits',
      'mcpgw-control-plane-sync',
      'mcpgw-authorization-server',
    ],
  },
);

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fastifyCookie } from '@fastify/cookie';
import type { AdminSignIn, IssuerEntry, TenantConfig } from '@mcpgw/config';
import type { AdminSessionRows } from '@mcpgw/control-plane';
import type { EgressGuard } from '@mcpgw/core';
import type { RateLimits } from '../../plugins/rate-limit.js';
import type { SignedInAdmin } from '@mcpgw/admin';
import { tenantAdminResource } from '@mcpgw/admin';
import type { AdminSession } from '@mcpgw/admin';
import { createSessionSealer } from '@mcpgw/admin';
import type { SessionAuth } from './session-authenticator.js';
import { createSessionAuth, tenantNotFound } from './session-authenticator.js';
import type { ProblemError } from './sign-in-problem.js';
import type { SignInClient } from './sign-in-client.js';
import { createSignInClient } from './sign-in-client.js';
import { registerSignInRoutes } from './sign-in-routes.js';
import { readCookie, SESSION_COOKIE_PATH, sessionCookieName, tenantAdminPath } from './session-cookie.js';

/**
 * Turns an access token of the tenant's identity provider into an admin
 * principal and the token's verified scopes and groups, or undefined when
 * it is not an admin's.
 */
export type ResolveAdmin = (tenantId: string, accessToken: string) => Promise<SignedInAdmin | undefined>;

export interface AdminSignInOptions {
  /** The tenants served now, by id (the tenant registry's `serving` map); read on every request. */
  tenants: {
    get(tenantId: string):
      | {
          readonly config: TenantConfig;
          /** The tenant's hosted issuer, which `{ "development": true }` names. */
          readonly hostedIssuer?: { readonly issuer: string } | undefined;
          issuerEgress?(entry: IssuerEntry): EgressGuard | undefined;
        }
      | undefined;
  };
  /** The canonical base URL (PUBLIC_URL, else http://HOST:PORT): https makes cookies `Secure`, and it names the default admin resource. */
  publicBaseUrl: string;
  /** The base URL a request's Host names (one of the gateway's own, else the canonical one). */
  baseUrlOf(host: string | undefined): string;
  /** The session cookie's keys (`ServerKeys.adminSession`): the first seals sessions, each opens them. */
  secrets: readonly Uint8Array[];
  /** The admin API's resolver: checks the access token (issuer, audience, expiry) and the tenant's admin scope or group. */
  resolveAdmin: ResolveAdmin;
  /** The admin API's per-request check of a session against the tenant's current issuers and bindings (throws the refusal). */
  recheckAdmin(session: AdminSession): Promise<void>;
  /** The sessions' records in the control plane, shared by every replica: made at sign-in, checked per request, ended at sign-out. */
  sessions: AdminSessionRows;
  /** The admin API's per-address limit, which the sign-in's routes count under too. */
  rateLimits: Pick<RateLimits, 'checkAdminAddress'>;
  /**
   * The admin API's refusal for a tenant that does not exist, so that a
   * session of another tenant, and the sign-in routes of a missing tenant or
   * one without sign-in, answer byte for byte as the admin API does for a
   * missing tenant. Default: the sign-in's own `not-found` problem.
   */
  tenantNotFound?: () => ProblemError;
  /** For discovery (tests record it); default global fetch. */
  fetch?: typeof fetch;
  /** Clock for session expiry; default Date.now. */
  now?: () => number;
}

/** What the console's pages need of the sign-in beyond the session authenticator. */
export interface ConsoleSignIn {
  /** The gateway's own origin as the request addressed it (the CSRF check's). */
  originOf(request: FastifyRequest): string;
  /** The tenant the browser's session cookie is sealed for, without the per-request checks (`/admin/` uses it to go there). */
  sealedTenantOf(request: FastifyRequest): string | undefined;
  /** Ends the session on the server (every replica), as POST .../logout does. */
  end(session: AdminSession): Promise<void>;
  /** Clears the browser's session cookie on `reply` (sign-out). */
  clearSession(reply: FastifyReply): FastifyReply;
}

export interface AdminSignInPlugin {
  /** The session authenticator and CSRF guard the admin API runs. */
  readonly session: SessionAuth;
  readonly console: ConsoleSignIn;
  /** Registers login, callback, logout and session under `/admin/v1/tenants/:tenantId/`. */
  register(app: FastifyInstance): Promise<void>;
}

/**
 * Browser sign-in for tenant admins (docs/admin-sign-in.md): the routes that
 * run the OpenID Connect authorization code flow with PKCE against the
 * tenant's identity provider and set the sealed session cookie, plus the
 * session's authenticator and CSRF guard for the admin API.
 */
export function createAdminSignIn(options: AdminSignInOptions): AdminSignInPlugin {
  const now = options.now ?? Date.now;
  const secure = new URL(options.publicBaseUrl).protocol === 'https:';
  const sealer = createSessionSealer(options.secrets, now);
  const notFound = options.tenantNotFound ?? tenantNotFound;
  const signInOf = (tenantId: string): { tenant: TenantConfig; signIn: AdminSignIn } | undefined => {
    const tenant = options.tenants.get(tenantId)?.config;
    return tenant?.adminSignIn === undefined ? undefined : { tenant, signIn: tenant.adminSignIn };
  };
  const originOf = (request: FastifyRequest) => new URL(options.baseUrlOf(request.headers.host)).origin;
  const session = createSessionAuth({
    sealer,
    secure,
    signInEnabled: (tenantId) => signInOf(tenantId) !== undefined,
    originOf,
    notFound,
    recheck: (signedIn) => options.recheckAdmin(signedIn),
    isLive: (signedIn) => options.sessions.isLive(signedIn.id, signedIn.tenantId),
  });

  // One client per tenant configuration: a changed tenant is a new object, so its next sign-in discovers again.
  const clients = new WeakMap<TenantConfig, Promise<SignInClient>>();
  const clientOf = (tenant: TenantConfig, signIn: AdminSignIn): Promise<SignInClient> => {
    let client = clients.get(tenant);
    if (client === undefined) {
      const issuer = signInIssuer(tenant, signIn, options.tenants.get(tenant.id)?.hostedIssuer?.issuer);
      // An issuer a tenant admin wrote is reached under the egress policy, as its key fetches are.
      const entry = tenant.auth?.issuers.find((candidate) => 'issuer' in candidate && candidate.issuer === issuer);
      const egress = entry === undefined ? undefined : options.tenants.get(tenant.id)?.issuerEgress?.(entry);
      client = createSignInClient({
        cookiePath: tenantAdminPath(tenant.id),
        signIn,
        issuer,
        resource: signIn.resource ?? tenantAdminResource(options.publicBaseUrl, tenant.id),
        secure,
        callbackUri: (request) => `${options.baseUrlOf(request.headers.host)}${tenantAdminPath(tenant.id)}/callback`,
        fetch: options.fetch ?? fetch,
        egress,
      });
      clients.set(tenant, client);
      // A failed discovery is not remembered: the next sign-in tries again.
      client.catch(() => clients.delete(tenant));
    }
    return client;
  };

  return {
    session,
    console: {
      originOf,
      clearSession: (reply) =>
        reply.header(
          'set-cookie',
          fastifyCookie.serialize(sessionCookieName(secure), '', {
            path: SESSION_COOKIE_PATH,
            httpOnly: true,
            sameSite: 'lax',
            secure,
            maxAge: 0,
            expires: new Date(0),
          }),
        ),
      sealedTenantOf(request) {
        const cookie = readCookie(request.headers.cookie, sessionCookieName(secure));
        const opened = cookie === undefined ? undefined : sealer.open(cookie);
        return opened?.ok === true ? opened.session.tenantId : undefined;
      },
      async end(signedIn) {
        await options.sessions.end(signedIn.id);
      },
    },
    register: (app) =>
      registerSignInRoutes(app, {
        signInOf,
        clientOf,
        issuerOf: ({ tenant, signIn }) =>
          signInIssuer(tenant, signIn, options.tenants.get(tenant.id)?.hostedIssuer?.issuer),
        session,
        sealer,
        secure,
        resolveAdmin: options.resolveAdmin,
        sessions: options.sessions,
        rateLimits: options.rateLimits,
        notFound,
        now,
      }),
  };
}

/**
 * The issuer a tenant's admins sign in with: the configured one, else the
 * tenant's first (`{ "development": true }` is its hosted issuer).
 */
function signInIssuer(tenant: TenantConfig, signIn: AdminSignIn, hostedIssuer: string | undefined): string {
  if (signIn.issuer !== undefined) return signIn.issuer;
  const first = tenant.auth?.issuers[0];
  if (first === undefined) throw new Error(`tenant '${tenant.id}' trusts no issuer`);
  if ('development' in first) {
    if (hostedIssuer === undefined) throw new Error("the tenant's hosted authorization server has no issuer");
    return hostedIssuer;
  }
  return first.issuer;
}

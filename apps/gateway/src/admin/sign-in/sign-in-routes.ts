import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fastifyCookie } from '@fastify/cookie';
import type { AdminSignIn, TenantConfig } from '@mcpgw/config';
import type { AdminSessionRows } from '@mcpgw/control-plane';
import { errorSummary, GatewayError } from '@mcpgw/core';
import type { RateLimits } from '../../plugins/rate-limit.js';
import { fromFramework } from '../admin-errors.js';
import type { AdminProblem } from '@mcpgw/admin';
import { overloaded, problemBody, serverFault, tooManyRequests } from '@mcpgw/admin';
import type { ResolveAdmin } from './admin-sign-in.js';
import type { SessionSealer } from '@mcpgw/admin';
import { consoleReturnPath, newCsrfToken, newSessionId } from '@mcpgw/admin';
import { CSRF_HEADER } from './csrf.js';
import type { SessionAuth } from './session-authenticator.js';
import type { SignInClient } from './sign-in-client.js';
import { returnToCookieName, sessionCookieName, sessionCookieOptions, tenantAdminPath } from './session-cookie.js';
import type { ProblemError } from './sign-in-problem.js';
import { isProblemError, SignInProblem, sendProblem } from './sign-in-problem.js';

interface SignInEntry {
  tenant: TenantConfig;
  signIn: AdminSignIn;
}

export interface SignInRouteContext {
  signInOf(tenantId: string): SignInEntry | undefined;
  clientOf(tenant: TenantConfig, signIn: AdminSignIn): Promise<SignInClient>;
  issuerOf(entry: SignInEntry): string;
  session: SessionAuth;
  sealer: SessionSealer;
  secure: boolean;
  resolveAdmin: ResolveAdmin;
  sessions: AdminSessionRows;
  /** The admin API's per-address limit, which the sign-in's routes count under as well. */
  rateLimits: Pick<RateLimits, 'checkAdminAddress'>;
  notFound(): ProblemError;
  now: () => number;
}

type TenantRequest = FastifyRequest<{ Params: { tenantId: string }; Querystring: Record<string, string | undefined> }>;

/** Routes of the sign-in, each answering its refusals as RFC 9457 problems (the app's error handler speaks JSON-RPC). */
export async function registerSignInRoutes(app: FastifyInstance, context: SignInRouteContext): Promise<void> {
  await app.register(async (scope) => {
    // setCookie and request.cookies for the flow's `state` and verifier cookies and the session cookie,
    // unless an enclosing scope (the admin API's) registered the plugin already.
    if (!scope.hasReplyDecorator('setCookie')) await scope.register(fastifyCookie);
    const base = '/admin/v1/tenants/:tenantId';
    const cookieName = sessionCookieName(context.secure);
    const returnToName = returnToCookieName(context.secure);
    // Lives as long as the flow's `state` and on the same path: only the callback reads it.
    const returnToCookie = (tenantId: string) => ({
      path: tenantAdminPath(tenantId),
      httpOnly: true,
      sameSite: 'lax' as const,
      secure: context.secure,
      maxAge: 600,
    });
    // Anyone may start a sign-in, and a callback makes the gateway call the identity provider: each is
    // counted against the admin API's per-address limit, and shed with it, before anything else runs.
    scope.addHook('onRequest', async (request, reply) => {
      const refusal = await context.rateLimits.checkAdminAddress(request);
      if (refusal === undefined) return undefined;
      return sendAdminProblem(reply, tooManyRequests(refusal));
    });
    scope.setErrorHandler((error: FastifyError, request, reply) => {
      // Load shedding (plugins/load-shedding.ts) set Retry-After already.
      if (error instanceof GatewayError && error.code === 'MCPGW_OVERLOADED') {
        return sendAdminProblem(reply, overloaded());
      }
      // What Fastify refuses before a handler runs (a logout's unreadable body): the admin API's answer.
      const framework = fromFramework(error);
      if (framework !== undefined) return sendAdminProblem(reply, framework);
      request.log.error({ err: errorSummary(error) }, 'admin sign-in request failed');
      return sendAdminProblem(reply, serverFault());
    });
    const shed = { config: { loadShed: true } } as const;

    const route =
      (handler: (request: TenantRequest, reply: FastifyReply, entry: SignInEntry) => Promise<FastifyReply>) =>
      async (request: TenantRequest, reply: FastifyReply) => {
        try {
          const entry = context.signInOf(request.params.tenantId);
          if (entry === undefined) throw context.notFound();
          return await handler(request, reply, entry);
        } catch (error) {
          if (isProblemError(error)) return sendProblem(reply, error);
          // A summary only: a token endpoint's error carries the request it answered (client credentials included).
          request.log.error({ err: errorSummary(error) }, 'admin sign-in failed');
          return sendProblem(
            reply,
            new SignInProblem('identity-provider-unavailable', 'Sign-in could not be completed: try again later.'),
          );
        }
      };

    const client = async (request: FastifyRequest, entry: SignInEntry): Promise<SignInClient> => {
      try {
        return await context.clientOf(entry.tenant, entry.signIn);
      } catch (cause) {
        request.log.warn(
          { tenant: entry.tenant.id, err: errorSummary(cause) },
          "admin sign-in: the identity provider's metadata cannot be used",
        );
        throw new SignInProblem(
          'identity-provider-unavailable',
          "The tenant's identity provider cannot be reached or its metadata is unusable.",
        );
      }
    };

    // Starts the flow: sets the `state` and PKCE verifier cookies and sends the browser to the identity provider.
    // No HEAD twin (Fastify adds one to every GET by default): a HEAD must neither start nor finish a sign-in.
    scope.get(
      `${base}/login`,
      { exposeHeadRoute: false, ...shed },
      route(async (request, reply, entry) => {
        const url = await (await client(request, entry)).authorizationUrl(request, reply);
        // `return_to`: a console page of this very tenant, else nothing (never an open redirect);
        // without it the sign-in ends on GET .../session, for API clients.
        const { tenantId } = request.params;
        const returnTo = consoleReturnPath(tenantId, request.query.return_to);
        if (returnTo === undefined) {
          if (request.cookies[returnToName] !== undefined) reply.clearCookie(returnToName, returnToCookie(tenantId));
        } else reply.setCookie(returnToName, returnTo, returnToCookie(tenantId));
        return reply.header('cache-control', 'no-store').redirect(url, 302);
      }),
    );

    // The identity provider's redirect back (RFC 6749 section 4.1.2).
    scope.get(
      `${base}/callback`,
      { exposeHeadRoute: false, ...shed },
      route(async (request, reply, entry) => {
        const { tenantId } = request.params;
        const query = request.query;
        if (query.error !== undefined) {
          throw new SignInProblem(
            'sign-in-failed',
            `The identity provider refused the sign-in: ${query.error.slice(0, 100)}.`,
          );
        }
        // RFC 9207 section 2.4: an `iss` naming another server means a mix-up; the response is not used.
        if (query.iss !== undefined && query.iss !== context.issuerOf(entry)) {
          throw new SignInProblem('sign-in-failed', 'The authorization response comes from another issuer.');
        }
        if (typeof query.code !== 'string' || query.code === '') {
          throw new SignInProblem('sign-in-failed', 'The callback carries no authorization code.');
        }
        const signInClient = await client(request, entry);
        let redeemed;
        try {
          redeemed = await signInClient.redeem(request, reply);
        } catch (cause) {
          request.log.info({ tenant: tenantId, err: errorSummary(cause) }, 'admin sign-in: state or code refused');
          throw new SignInProblem(
            'sign-in-failed',
            'The sign-in response does not match the sign-in this browser started (state), or the code was refused: start again.',
          );
        }
        const admin = await context.resolveAdmin(tenantId, redeemed.accessToken);
        const principal = admin?.principal;
        if (admin === undefined || principal?.kind !== 'tenant-admin' || principal.tenantId !== tenantId) {
          throw new SignInProblem('not-an-admin', 'You signed in, but your account is not an admin of this tenant.');
        }
        const now = context.now();
        const expiresAt = Math.min(redeemed.expiresAt ?? Infinity, now + entry.signIn.maxSessionSeconds * 1000);
        const maxAge = Math.floor((expiresAt - now) / 1000);
        if (maxAge <= 0) throw new SignInProblem('sign-in-failed', 'The access token has already expired.');
        const id = newSessionId();
        // Recorded before the cookie is set: a binding removed (or the tenant suspended) since the check above
        // leaves nothing to record, and no session.
        await context.sessions.sweepExpired().catch((error: unknown) => {
          request.log.warn({ err: errorSummary(error) }, 'admin sign-in: expired sessions not swept');
        });
        const recorded = await context.sessions.open({
          id,
          tenantId,
          bindingName: admin.binding,
          issuer: principal.issuer,
          subject: principal.subject,
          expiresAt,
        });
        if (!recorded) {
          throw new SignInProblem('not-an-admin', 'You signed in, but your account is not an admin of this tenant.');
        }
        const sealed = context.sealer.seal({
          id,
          tenantId,
          principal: { ...principal, via: 'session' },
          scopes: admin.scopes,
          groups: admin.groups,
          expiresAt,
          csrfToken: newCsrfToken(),
        });
        request.log.info({ tenant: tenantId, subject: principal.subject }, 'admin signed in');
        // Checked again: a cookie is the browser's to alter.
        const returnTo = consoleReturnPath(tenantId, request.cookies[returnToName]);
        if (request.cookies[returnToName] !== undefined) reply.clearCookie(returnToName, returnToCookie(tenantId));
        return reply
          .setCookie(cookieName, sealed, sessionCookieOptions(context.secure, maxAge))
          .header('cache-control', 'no-store')
          .redirect(returnTo ?? `${tenantAdminPath(tenantId)}/session`, 303);
      }),
    );

    // Who am I, and the CSRF token a page sends back on state-changing requests.
    scope.get(
      `${base}/session`,
      shed,
      route(async (request, reply) => {
        const session = await context.session.currentSession(request);
        if (session === undefined) {
          throw new SignInProblem(
            'session-required',
            `Not signed in: open ${tenantAdminPath(request.params.tenantId)}/login.`,
          );
        }
        return reply.header('cache-control', 'no-store').send({
          tenantId: session.tenantId,
          principal: session.principal,
          expiresAt: new Date(session.expiresAt).toISOString(),
          csrfToken: session.csrfToken,
          csrfHeader: CSRF_HEADER,
        });
      }),
    );

    // Ends the session: its record, so the cookie is refused on every replica even if replayed, and the
    // cookie in this browser. It changes state, so it takes the CSRF token like any other write.
    scope.post(
      `${base}/logout`,
      shed,
      route(async (request, reply) => {
        try {
          const session = context.session.csrfChecked(request);
          if (session !== undefined) await context.sessions.end(session.id);
        } catch (error) {
          // An expired or broken cookie is cleared all the same; a cross-site logout is refused.
          if (!(error instanceof SignInProblem) || error.problem.code !== 'session-invalid') throw error;
        }
        const { path, secure, httpOnly, sameSite } = sessionCookieOptions(context.secure, 0);
        return reply.clearCookie(cookieName, { path, secure, httpOnly, sameSite }).code(204).send();
      }),
    );
  });
}

/** An admin API problem from a sign-in route: the same bytes as the admin API's, with its headers. */
function sendAdminProblem(reply: FastifyReply, problem: AdminProblem): FastifyReply {
  for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value);
  return sendProblem(
    reply,
    Object.assign(new Error(problem.detail), { statusCode: problem.status, problem: problemBody(problem) }),
  );
}

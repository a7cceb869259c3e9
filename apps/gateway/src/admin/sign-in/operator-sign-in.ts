import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fastifyCookie } from '@fastify/cookie';
import { decodeJwt } from 'jose';
import type { EnvConfig } from '@mcpgw/config';
import { isLoopbackHost } from '@mcpgw/config';
import { errorSummary } from '@mcpgw/core';
import type { AdminPrincipal, OperatorSession } from '@mcpgw/admin';
import type { OperatorSessionRows } from '@mcpgw/control-plane';
import {
  CONSOLE_PREFIX,
  createOperatorSessionSealer,
  newCsrfToken,
  newSessionId,
  OPERATOR_CALLBACK_PATH,
  OPERATOR_LOGIN_PATH,
  OPERATOR_SIGN_IN_PATH,
  OPERATOR_SIGN_OUT_PATH,
  operatorSignInPage,
} from '@mcpgw/admin';
import { formFields } from '../console/console-form.js';
import { sendPage, seeOther } from '../console/console-reply.js';
import { csrfRefusal } from './csrf.js';
import { cookieName, readCookie, SESSION_COOKIE_PATH } from './session-cookie.js';
import type { SignInClient } from './sign-in-client.js';
import { createSignInClient } from './sign-in-client.js';

/** The longest an operator's browser session lives, whatever the token's lifetime. */
const MAX_SESSION_MS = 3_600_000;

export interface OperatorSignInOptions {
  /** `ServerKeys.adminSession`, as the tenant admins' sessions. */
  secrets: readonly Uint8Array[];
  /** Cookies `Secure` (PUBLIC_URL is https). */
  secure: boolean;
  /** The gateway's own origin as the request addressed it (the CSRF check's). */
  originOf(request: FastifyRequest): string;
  /** TRUSTED_PROXIES is empty: the peer address is the browser's own, not a proxy's. */
  peerIsClient: boolean;
  /**
   * Signs a local operator token (the one `npm run token -- --operator`
   * signs), when this gateway takes one: loopback bind, no OPERATOR_ISSUER.
   */
  mintLocalOperatorToken: (() => Promise<string>) | undefined;
  /**
   * OPERATOR_ISSUER, when set: operators sign in there by the authorization
   * code grant. `client` builds the console's OAuth client of it (discovery
   * included); undefined when OPERATOR_CONSOLE_CLIENT_ID is not set.
   */
  operatorIssuer?: { issuer: string; client: (() => Promise<SignInClient>) | undefined } | undefined;
  /** The admin API's resolver: verifies the token as any bearer token and gives its principal. */
  resolve(accessToken: string): Promise<AdminPrincipal | undefined>;
  /** The sessions' control-plane records: a cookie whose record is gone or expired opens nothing. */
  sessions: OperatorSessionRows;
  now?: () => number;
}

export interface OperatorSignIn {
  /** The operator session this request's cookie names, if it opens and its record is live (recorded, unexpired). */
  sessionOf(request: FastifyRequest): Promise<OperatorSession | undefined>;
  register(scope: FastifyInstance): void;
}

/**
 * Operators' browser sign-in (docs/admin-console.md, "Operators"). On a
 * loopback `npm start` the gateway is its own local operator issuer, and
 * nobody but someone on this machine can reach it: there, "Continue as the
 * local operator" signs a local operator token server-side, verifies it as
 * the admin API verifies any operator token, records the session in the
 * control plane (who, until when: the token's expiry, at most an hour) and
 * seals only its random id and a CSRF secret every console form posts back
 * into a session cookie like the tenant admin's (AES-GCM under the same key,
 * its own associated data, `Path=/admin`, HttpOnly, SameSite=Lax). Sign-out
 * deletes the record, so a copied cookie is worth nothing from then on. Refused (403) from any peer that is not
 * loopback, behind a proxy, or where the gateway takes no local operator.
 * With OPERATOR_ISSUER and its console client, operators sign in there
 * instead (`registerIssuerSignIn`) into the same kind of session.
 */
export function createOperatorSignIn(options: OperatorSignInOptions): OperatorSignIn {
  const now = options.now ?? Date.now;
  const sealer = createOperatorSessionSealer(options.secrets);
  const name = cookieName('mcpgw-operator-session', options.secure, SESSION_COOKIE_PATH);
  const cookie = (maxAge: number) =>
    ({ path: SESSION_COOKIE_PATH, httpOnly: true, sameSite: 'lax', secure: options.secure, maxAge }) as const;

  const sessionOf = async (request: FastifyRequest): Promise<OperatorSession | undefined> => {
    const value = readCookie(request.headers.cookie, name);
    if (value === undefined) return undefined;
    const opened = sealer.open(value);
    if (!opened.ok) return undefined;
    const record = await options.sessions.find(opened.cookie.id);
    if (record === undefined || record.expiresAt <= now()) return undefined;
    return {
      id: record.id,
      principal: { kind: 'operator', issuer: record.issuer, subject: record.subject, via: 'session' },
      expiresAt: record.expiresAt,
      csrfToken: opened.cookie.csrfToken,
    };
  };

  /** Why this request may not sign in as the local operator, or undefined. */
  const localRefusal = (request: FastifyRequest): string | undefined => {
    if (options.mintLocalOperatorToken === undefined) {
      return 'This gateway takes no local operator (it has OPERATOR_ISSUER, or binds to a non-loopback address).';
    }
    const peer = request.socket.remoteAddress ?? '';
    if (!options.peerIsClient || !isLoopbackHost(peer.replace(/^::ffff:/i, ''))) {
      return 'Only a browser on this machine may continue as the local operator.';
    }
    return undefined;
  };

  /** Records the session (sweeping expired ones first), sets its cookie, and sends the browser to the tenant list. */
  const openSession = async (
    request: FastifyRequest,
    reply: FastifyReply,
    principal: { issuer: string; subject: string },
    expiresAt: number,
    how: string,
  ): Promise<FastifyReply> => {
    await options.sessions.sweepExpired().catch((error: unknown) => {
      request.log.warn({ err: errorSummary(error) }, 'operator sign-in: expired sessions not swept');
    });
    const id = newSessionId();
    await options.sessions.open({ id, issuer: principal.issuer, subject: principal.subject, expiresAt });
    const sealed = sealer.seal({ id, csrfToken: newCsrfToken() });
    request.log.info({ subject: principal.subject }, `operator signed in (${how})`);
    reply.header('set-cookie', fastifyCookie.serialize(name, sealed, cookie(Math.floor((expiresAt - now()) / 1000))));
    return seeOther(reply, `${CONSOLE_PREFIX}/tenants`);
  };

  const issuerSignIn = options.operatorIssuer;
  const issuerPage = issuerSignIn && { issuer: issuerSignIn.issuer, configured: issuerSignIn.client !== undefined };
  const refused = (reply: FastifyReply, status: number, refusal: string) =>
    sendPage(
      reply.header('cache-control', 'no-store'),
      status,
      operatorSignInPage({ localOperator: false, refusal, issuer: issuerPage }),
    );

  // One client, discovered at the first sign-in; a failed discovery is not remembered.
  let client: Promise<SignInClient> | undefined;
  const clientOf = (build: () => Promise<SignInClient>): Promise<SignInClient> => {
    if (client === undefined) {
      const building = build();
      client = building;
      building.catch(() => {
        if (client === building) client = undefined;
      });
    }
    return client;
  };

  /**
   * Sign-in at OPERATOR_ISSUER: the authorization code grant (RFC 6749
   * section 4.1) with PKCE S256 (RFC 7636 section 4), the tenant admins'
   * client with its flow cookies scoped to `/admin/operator`. The access
   * token is verified by the admin API's own resolver, so a token the admin
   * API refuses (no operator role, wrong audience) opens no session. The
   * callback always lands on the tenant list: no return-to, no open redirect.
   */
  const registerIssuerSignIn = (parent: FastifyInstance) => {
    if (issuerSignIn === undefined) return;
    const build = issuerSignIn.client;
    void parent.register(async (scope) => {
      if (!scope.hasReplyDecorator('setCookie')) await scope.register(fastifyCookie);
      const unavailable = (request: FastifyRequest, cause: unknown) => {
        request.log.warn(
          { err: errorSummary(cause) },
          "operator sign-in: the operators' identity provider is unusable",
        );
        return "The operators' identity provider cannot be reached or its metadata is unusable: try again later.";
      };
      // No HEAD twins: a HEAD must neither start nor finish a sign-in.
      scope.get(OPERATOR_LOGIN_PATH, { exposeHeadRoute: false }, async (request, reply) => {
        if (build === undefined) return refused(reply, 404, 'Browser sign-in needs OPERATOR_CONSOLE_CLIENT_ID.');
        let url: string;
        try {
          url = await (await clientOf(build)).authorizationUrl(request, reply);
        } catch (cause) {
          return refused(reply, 502, unavailable(request, cause));
        }
        return reply.header('cache-control', 'no-store').redirect(url, 302);
      });

      // The identity provider's redirect back (RFC 6749 section 4.1.2).
      scope.get(OPERATOR_CALLBACK_PATH, { exposeHeadRoute: false }, async (request, reply) => {
        if (build === undefined) return refused(reply, 404, 'Browser sign-in needs OPERATOR_CONSOLE_CLIENT_ID.');
        const query = request.query as Record<string, unknown>;
        if (typeof query.error === 'string') {
          return refused(reply, 403, `The identity provider refused the sign-in: ${query.error.slice(0, 100)}.`);
        }
        // RFC 9207 section 2.4: an `iss` naming another server means a mix-up; the response is not used.
        if (query.iss !== undefined && query.iss !== issuerSignIn.issuer) {
          return refused(reply, 400, 'The authorization response comes from another issuer.');
        }
        let signInClient: SignInClient;
        try {
          signInClient = await clientOf(build);
        } catch (cause) {
          return refused(reply, 502, unavailable(request, cause));
        }
        let redeemed: Awaited<ReturnType<SignInClient['redeem']>>;
        try {
          redeemed = await signInClient.redeem(request, reply);
        } catch (cause) {
          request.log.info({ err: errorSummary(cause) }, 'operator sign-in: state or code refused');
          return refused(
            reply,
            400,
            'The sign-in response does not match the sign-in this browser started (state), or the code was refused: start again.',
          );
        }
        const principal = await options.resolve(redeemed.accessToken).catch((cause: unknown) => {
          request.log.info({ err: errorSummary(cause) }, 'operator sign-in: the access token is refused');
          return undefined;
        });
        if (principal?.kind !== 'operator') {
          return refused(
            reply,
            403,
            'You signed in, but your account is not an operator of this gateway (its token lacks the operator role, or is not for this admin API).',
          );
        }
        const expiresAt = Math.min(redeemed.expiresAt ?? Infinity, now() + MAX_SESSION_MS);
        if (expiresAt <= now()) return refused(reply, 400, 'The access token has already expired: start again.');
        return openSession(
          request,
          reply.header('cache-control', 'no-store'),
          principal,
          expiresAt,
          issuerSignIn.issuer,
        );
      });
    });
  };

  return {
    sessionOf,
    register(scope) {
      scope.get(OPERATOR_SIGN_IN_PATH, async (request, reply) =>
        sendPage(
          reply,
          200,
          operatorSignInPage({ localOperator: localRefusal(request) === undefined, issuer: issuerPage }),
        ),
      );

      scope.post(OPERATOR_SIGN_IN_PATH, async (request, reply) => {
        const refusal = localRefusal(request);
        if (refusal !== undefined)
          return sendPage(reply, 403, operatorSignInPage({ localOperator: false, refusal, issuer: issuerPage }));
        // Login CSRF: another site's page must not sign this browser in (Origin and Sec-Fetch-Site, as every
        // form; there is no session yet, so no synchronizer token to compare).
        const crossSite = csrfRefusal(request, { csrfToken: 'none' }, options.originOf(request), {
          token: 'none',
          where: 'the form',
        });
        if (crossSite !== undefined) {
          return sendPage(reply, 403, operatorSignInPage({ localOperator: true, refusal: crossSite.message }));
        }
        const token = await options.mintLocalOperatorToken!();
        const principal = await options.resolve(token);
        if (principal?.kind !== 'operator') {
          throw new Error('the local operator token does not verify as an operator token');
        }
        const { exp } = decodeJwt(token);
        const expiresAt = Math.min(typeof exp === 'number' ? exp * 1000 : Infinity, now() + MAX_SESSION_MS);
        if (expiresAt <= now()) throw new Error('the local operator token has already expired');
        return openSession(request, reply, principal, expiresAt, 'local operator');
      });

      registerIssuerSignIn(scope);

      scope.post(OPERATOR_SIGN_OUT_PATH, async (request, reply: FastifyReply) => {
        const session = await sessionOf(request);
        if (session !== undefined) {
          const csrf = formFields(request).csrf;
          const refusal = csrfRefusal(request, session, options.originOf(request), { token: csrf, where: 'the form' });
          if (refusal !== undefined)
            return sendPage(
              reply,
              403,
              operatorSignInPage({ localOperator: false, refusal: refusal.message, issuer: issuerPage }),
            );
          // The record goes first: from here on this cookie, and any copy of it, opens nothing.
          await options.sessions.end(session.id);
          request.log.info({ subject: session.principal.subject }, 'operator signed out');
        }
        reply.header('set-cookie', fastifyCookie.serialize(name, '', { ...cookie(0), expires: new Date(0) }));
        return seeOther(reply, `${CONSOLE_PREFIX}/`);
      });
    },
  };
}

/**
 * The operators' sign-in at OPERATOR_ISSUER, from the environment: the
 * console's client (OPERATOR_CONSOLE_CLIENT_ID, its secret and scopes), the
 * admin API's operator audience as the RFC 8707 resource, and the callback
 * under the base URL the browser used. Undefined without OPERATOR_ISSUER.
 */
export function operatorIssuerSignIn(
  env: Pick<
    EnvConfig,
    'OPERATOR_ISSUER' | 'OPERATOR_CONSOLE_CLIENT_ID' | 'OPERATOR_CONSOLE_CLIENT_SECRET' | 'OPERATOR_CONSOLE_SCOPE'
  >,
  access: { readonly operatorAudience: string | undefined },
  web: { baseUrlOf: (host: string | undefined) => string; secure: boolean },
  fetcher: typeof fetch = fetch,
): OperatorSignInOptions['operatorIssuer'] {
  const issuer = env.OPERATOR_ISSUER;
  if (issuer === undefined) return undefined;
  const clientId = env.OPERATOR_CONSOLE_CLIENT_ID;
  const resource = access.operatorAudience;
  if (clientId === undefined || resource === undefined) return { issuer, client: undefined };
  return {
    issuer,
    client: () =>
      createSignInClient({
        cookiePath: `${CONSOLE_PREFIX}/operator`,
        signIn: {
          clientId,
          clientSecret: env.OPERATOR_CONSOLE_CLIENT_SECRET,
          scopes: env.OPERATOR_CONSOLE_SCOPE.split(' '),
          resource,
          maxSessionSeconds: MAX_SESSION_MS / 1000,
        },
        issuer,
        resource,
        secure: web.secure,
        callbackUri: (request) => `${web.baseUrlOf(request.headers.host)}${OPERATOR_CALLBACK_PATH}`,
        fetch: fetcher,
      }),
  };
}

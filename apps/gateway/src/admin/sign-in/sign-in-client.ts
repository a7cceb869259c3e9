import type { FastifyReply, FastifyRequest } from 'fastify';
import { decodeJwt } from 'jose';
import { discoverIssuerMetadata, egressFetch } from '@mcpgw/auth';
import { authorizationRequestUrl, randomToken, redeemAuthorizationCode } from '@mcpgw/authorization-server';
import type { EgressGuard } from '@mcpgw/core';
import type { AdminSignIn } from '@mcpgw/config';
import { flowCookieNames } from './session-cookie.js';

/** One OAuth client for a browser sign-in to the admin console (a tenant's admins, or operators). */
export interface SignInClient {
  /** The authorization request URL; sets the `state` and PKCE verifier cookies on `reply`. */
  authorizationUrl(request: FastifyRequest, reply: FastifyReply): Promise<string>;
  /**
   * Checks `state` against this browser's cookie, redeems the code with the
   * PKCE verifier and the resource indicator, and clears both cookies.
   * Rejects on a wrong state or a refused exchange.
   */
  redeem(request: FastifyRequest, reply: FastifyReply): Promise<{ accessToken: string; expiresAt: number | undefined }>;
}

export interface SignInClientSettings {
  /**
   * The path the `state` and PKCE verifier cookies are scoped to (RFC 6265bis
   * section 5.1.4): the one the callback lives under, so that they come back
   * there and nowhere else; a tenant's admin path (`tenantAdminPath`) for
   * its admins.
   */
  cookiePath: string;
  signIn: AdminSignIn;
  /** The issuer URL whose discovery metadata names the endpoints. */
  issuer: string;
  /** RFC 8707 resource indicator of the admin API. */
  resource: string;
  /** Cookies `Secure` (PUBLIC_URL is https). */
  secure: boolean;
  /** The redirect URI for a request: the callback under the base URL the browser used, so its cookies come back. */
  callbackUri(request: FastifyRequest): string;
  fetch: typeof fetch;
  /**
   * Present when a tenant admin wrote the issuer: discovery and the token
   * request connect only where the egress policy allows (instead of `fetch`).
   */
  egress?: EgressGuard | undefined;
}

/** Seconds the `state` and verifier cookies live: a sign-in left longer starts again. */
const FLOW_COOKIE_SECONDS = 600;

/**
 * Builds one client for the authorization code grant (RFC 6749
 * section 4.1) with PKCE S256 (RFC 7636 section 4.2, the verifier in an
 * HttpOnly cookie), a random `state` in a cookie checked at the callback
 * (RFC 6749 section 10.12), and `resource` (RFC 8707 section 2) on both
 * requests, built from the code-grant pieces it shares with the hosted
 * authorization server's upstream sign-in. It is ours rather than
 * `@fastify/oauth2`'s: that plugin
 * configures one provider per registration on a Fastify instance, while
 * tenants and their issuers come and go as the gateway runs, so each
 * tenant's client was the plugin registered in a private, never-listening
 * instance; what it did for us is these two requests, written out here over
 * `fetch` (the egress-guarded one for issuers tenant admins wrote).
 *
 * The endpoints come from the issuer's discovery metadata, read with the
 * gateway's own checks (exact `issuer` match, https endpoints, size and
 * time bounds).
 */
export async function createSignInClient(settings: SignInClientSettings): Promise<SignInClient> {
  const fetcher = settings.egress === undefined ? settings.fetch : egressFetch(settings.egress);
  const metadata = await discoverIssuerMetadata(settings.issuer, ['authorization_endpoint', 'token_endpoint'], {
    fetch: fetcher,
  });
  // RFC 7636 section 4.2 and RFC 8414 section 2: a server that lists its methods and not S256 cannot be used.
  const methods = metadata.code_challenge_methods_supported;
  if (Array.isArray(methods) && !methods.includes('S256')) {
    throw new Error(`${settings.issuer} does not support PKCE S256 (code_challenge_methods_supported)`);
  }
  const { signIn } = settings;
  // `__Secure-` over https (RFC 6265bis section 4.1.3.1), like the session cookie.
  const names = flowCookieNames(settings.secure);
  // Lax, not Strict: the callback arrives by the identity provider's cross-site redirect and needs them.
  const cookie = {
    path: settings.cookiePath,
    httpOnly: true,
    sameSite: 'lax',
    secure: settings.secure,
    maxAge: FLOW_COOKIE_SECONDS,
  } as const;
  return {
    async authorizationUrl(request, reply) {
      const state = randomToken();
      const verifier = randomToken();
      reply.setCookie(names.state, state, cookie);
      reply.setCookie(names.verifier, verifier, cookie);
      // The admin API is this client's own resource: `resource` names it (RFC 8707 section 2).
      return authorizationRequestUrl({
        endpoint: metadata.authorization_endpoint,
        client: signIn,
        redirectUri: settings.callbackUri(request),
        scopes: signIn.scopes,
        state,
        codeVerifier: verifier,
        parameters: { resource: settings.resource },
      });
    },
    async redeem(request, reply) {
      const query = request.query as { state?: unknown; code?: unknown };
      const expected = request.cookies[names.state];
      const verifier = request.cookies[names.verifier];
      // Single use: cleared whatever the outcome, so a state that reached the callback cannot be replayed.
      reply.clearCookie(names.state, cookie);
      reply.clearCookie(names.verifier, cookie);
      if (expected === undefined || typeof query.state !== 'string' || query.state !== expected) {
        throw new Error('the state is not the one this browser was given');
      }
      if (verifier === undefined || typeof query.code !== 'string' || query.code === '') {
        throw new Error('the callback has no code, or this browser no PKCE verifier');
      }
      // RFC 6749 section 4.1.3, with the verifier (RFC 7636 section 4.5) and the resource (RFC 8707 section 2.2).
      const answer = await redeemAuthorizationCode({
        endpoint: metadata.token_endpoint,
        client: signIn,
        code: query.code,
        redirectUri: settings.callbackUri(request),
        codeVerifier: verifier,
        parameters: { resource: settings.resource },
        fetch: fetcher,
      });
      if (typeof answer.access_token !== 'string' || answer.access_token === '') {
        throw new Error('the token response has no access_token');
      }
      const expiresAt =
        typeof answer.expires_in === 'number' && Number.isFinite(answer.expires_in)
          ? new Date(Date.now() + answer.expires_in * 1000)
          : undefined;
      return { accessToken: answer.access_token, expiresAt: expiryOf(answer.access_token, expiresAt) };
    },
  };
}

/**
 * The earlier of the token response's `expires_in` (RFC 6749 section 5.1)
 * and a JWT access token's `exp` (RFC 9068 section 2.2; it was verified by
 * the admin resolver before any session is made from it).
 */
function expiryOf(accessToken: string, expiresAt: Date | undefined): number | undefined {
  const candidates: number[] = [];
  if (expiresAt instanceof Date && !Number.isNaN(expiresAt.getTime())) candidates.push(expiresAt.getTime());
  try {
    const { exp } = decodeJwt(accessToken);
    if (typeof exp === 'number') candidates.push(exp * 1000);
  } catch {
    // An opaque access token: its lifetime is the response's alone.
  }
  return candidates.length === 0 ? undefined : Math.min(...candidates);
}

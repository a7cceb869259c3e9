import type { FastifyReply, FastifyRequest } from 'fastify';
import Fastify from 'fastify';
import { decodeJwt } from 'jose';
import { discoverIssuerMetadata, egressFetch } from '@mcpgw/auth';
import { egressAgents, type EgressGuard } from '@mcpgw/core';
import type { AdminSignIn } from '@mcpgw/config';
import { flowCookieNames, tenantAdminPath } from './session-cookie.js';

/** One tenant's OAuth client for admin sign-in. */
export interface SignInClient {
  /** The authorization request URL; sets the `state` and PKCE verifier cookies on `reply`. */
  authorizationUrl(request: FastifyRequest, reply: FastifyReply): Promise<string>;
  /**
   * Checks `state` against this browser's cookie, redeems the code with the
   * PKCE verifier and the resource indicator, and clears both cookies.
   * Rejects with the library's error on a wrong state or a refused exchange.
   */
  redeem(request: FastifyRequest, reply: FastifyReply): Promise<{ accessToken: string; expiresAt: number | undefined }>;
}

export interface SignInClientSettings {
  tenantId: string;
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
   * request connect only where the egress policy allows.
   */
  egress?: EgressGuard | undefined;
}

/** Seconds the `state` and verifier cookies live: a sign-in left longer starts again. */
const FLOW_COOKIE_SECONDS = 600;
/** The token request gives up after this long (the library's HTTP client has no timeout of its own). */
const TOKEN_TIMEOUT_MS = 5_000;
const NAME = 'adminSignIn';

/**
 * Builds one tenant's client on `@fastify/oauth2`, which runs the flow:
 * authorization code (RFC 6749 section 4.1) with PKCE S256 (RFC 7636
 * section 4.2, the verifier in an HttpOnly cookie), a random `state` in a
 * cookie checked at the callback (RFC 6749 section 10.12), and `resource`
 * (RFC 8707 section 2) on both requests. Tenants come and go while the
 * gateway runs, and the plugin configures one provider per registration, so
 * each tenant's client is the plugin registered in a private, never-listening
 * Fastify instance; its functions work on the gateway's requests and replies.
 *
 * The endpoints come from the issuer's discovery metadata, read here with
 * the gateway's own checks (exact `issuer` match, https endpoints, size and
 * time bounds) rather than the plugin's `discovery` option, which has none.
 */
export async function createSignInClient(settings: SignInClientSettings): Promise<SignInClient> {
  const metadata = await discoverIssuerMetadata(settings.issuer, ['authorization_endpoint', 'token_endpoint'], {
    fetch: settings.egress === undefined ? settings.fetch : egressFetch(settings.egress),
  });
  // RFC 7636 section 4.2 and RFC 8414 section 2: a server that lists its methods and not S256 cannot be used.
  const methods = metadata.code_challenge_methods_supported;
  if (Array.isArray(methods) && !methods.includes('S256')) {
    throw new Error(`${settings.issuer} does not support PKCE S256 (code_challenge_methods_supported)`);
  }
  const authorize = new URL(metadata.authorization_endpoint);
  const token = new URL(metadata.token_endpoint);
  const { signIn } = settings;
  const host = Fastify({ logger: false });
  // Loaded with the first tenant that signs admins in: a gateway without one never loads it and the
  // OAuth client library beneath it (docs/operations.md, "Memory at start").
  const { fastifyOauth2 } = await import('@fastify/oauth2');
  await host.register(fastifyOauth2, {
    name: NAME,
    scope: signIn.scopes,
    credentials: {
      client: { id: signIn.clientId, secret: signIn.clientSecret ?? '' },
      auth: {
        authorizeHost: authorize.origin,
        authorizePath: authorize.pathname,
        tokenHost: token.origin,
        tokenPath: token.pathname,
      },
      // A confidential client authenticates with HTTP Basic (RFC 6749 section 2.3.1); a public one only names itself.
      options: { authorizationMethod: signIn.clientSecret === undefined ? 'body' : 'header' },
      http: {
        timeout: TOKEN_TIMEOUT_MS,
        ...(settings.egress === undefined ? {} : { agent: tokenAgent(settings.egress, token) }),
      },
    },
    callbackUri: settings.callbackUri,
    callbackUriParams: { resource: settings.resource },
    tokenRequestParams: { resource: settings.resource },
    pkce: 'S256',
    // `__Secure-` over https (RFC 6265bis section 4.1.3.1), like the session cookie.
    redirectStateCookieName: flowCookieNames(settings.secure).state,
    verifierCookieName: flowCookieNames(settings.secure).verifier,
    // Lax, not Strict: the callback arrives by the identity provider's cross-site redirect and needs them.
    cookie: {
      path: tenantAdminPath(settings.tenantId),
      httpOnly: true,
      sameSite: 'lax',
      secure: settings.secure,
      maxAge: FLOW_COOKIE_SECONDS,
    },
  });
  await host.ready();
  // The plugin decorates `name` and `oauth2` + its capitalised form.
  const oauth = host.oauth2AdminSignIn;
  if (oauth === undefined) throw new Error('@fastify/oauth2 did not decorate its instance');
  return {
    authorizationUrl: (request, reply) => oauth.generateAuthorizationUri(request, reply),
    async redeem(request, reply) {
      const { token: answer } = await oauth.getAccessTokenFromAuthorizationCodeFlow(request, reply);
      if (typeof answer.access_token !== 'string' || answer.access_token === '') {
        throw new Error('the token response has no access_token');
      }
      return { accessToken: answer.access_token, expiresAt: expiryOf(answer.access_token, answer.expires_at) };
    },
  };
}

/** The egress-guarded agent for the token endpoint's scheme (the HTTP client takes one agent per request). */
function tokenAgent(guard: EgressGuard, endpoint: URL) {
  const agents = egressAgents(guard);
  return endpoint.protocol === 'https:' ? agents.httpsAgent : agents.httpAgent;
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

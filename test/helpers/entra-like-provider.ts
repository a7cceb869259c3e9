import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

/**
 * A local OpenID Connect provider for tests, on 127.0.0.1:0, that behaves
 * like Microsoft Entra ID where hosted connectors fail against it:
 * - OpenID discovery only: `${issuer}/.well-known/openid-configuration`; the
 *   RFC 8414 document (`/.well-known/oauth-authorization-server/...`) is a 404,
 *   and there is no dynamic registration endpoint (RFC 7591);
 * - an authorization or token request carrying `resource` (RFC 8707) is
 *   refused, as Entra's v2 endpoint refuses it beside scopes
 *   (AADSTS9010010); every refusal is recorded in `refusals`;
 * - access tokens are for another audience, a GUID (Microsoft Graph's), so
 *   they are useless to the gateway; ID tokens have `aud` = the client id
 *   and carry `tid`, `oid`, `preferred_username` and `groups` / `roles`.
 * The `keycloak` flavour issues Keycloak-shaped tokens instead (issuer
 * `/realms/test`, roles nested in `realm_access.roles` and
 * `resource_access.<client>.roles`, `iss` in authorization responses per
 * RFC 9207); its endpoints keep the Entra-like rules above.
 *
 * Written here (Node http and jose) rather than as an oidc-provider
 * instance: the tests need a provider that misbehaves on request (a forged
 * or expired ID token, a wrong audience or nonce, an outage), which a
 * certified implementation will not do, and the few endpoints are small.
 * It still does the real protocol: registered redirect URIs matched exactly,
 * PKCE S256 checked, codes single use and short-lived, client secrets
 * checked (HTTP Basic or form), tokens signed with RS256 keys from its JWKS.
 *
 * The configured user is signed in without a page: the authorization
 * request redirects straight back with a code. With `interactive: true` it
 * answers with a small HTML form instead (a "Sign in" and a "Cancel"
 * button), for browser tests.
 */
export interface EntraLikeProvider {
  readonly origin: string;
  readonly issuer: string;
  /** Entra's directory (tenant) id: `tid` in the tokens. */
  readonly tenantId: string;
  readonly authorizationEndpoint: string;
  readonly tokenEndpoint: string;
  readonly jwksUri: string;
  readonly userinfoEndpoint: string;
  /** The audience of the access tokens it issues (a GUID: Microsoft Graph's). */
  readonly accessTokenAudience: string;
  /** The user signed in next (mutable). */
  user: EntraLikeUser;
  /** Misbehaviour applied to the ID tokens issued from now on (mutable). */
  tamper: IdTokenTamper;
  /** While true every endpoint answers 503. */
  down: boolean;
  /** Requests refused with an OAuth error, in order. */
  readonly refusals: Refusal[];
  /** Query parameters of every authorization request received. */
  readonly authorizationRequests: URLSearchParams[];
  /** Form parameters and Authorization header of every token request received. */
  readonly tokenRequests: { params: URLSearchParams; authorization: string | undefined }[];
  /** Requests received on a path. */
  hits(path: string): number;
  /** Replaces the signing key (a new `kid`); the JWKS publishes only the new one. */
  rotateKeys(): Promise<void>;
  /**
   * Plays the browser at an authorization URL: follows the redirect the
   * provider answers with (submitting the form in interactive mode, with
   * `cancel` to press "Cancel") and returns the redirect's target.
   */
  signIn(authorizationUrl: string, options?: { cancel?: boolean }): Promise<URL>;
  close(): Promise<void>;
}

export interface EntraLikeClient {
  readonly clientId: string;
  /** Absent: a public client (PKCE only). */
  readonly clientSecret?: string;
  readonly redirectUris: readonly string[];
}

export interface EntraLikeUser {
  /** `sub`; default a pairwise-looking id (Entra) or a UUID (Keycloak). */
  readonly subject?: string;
  /** `oid` (Entra); default a GUID. */
  readonly objectId?: string;
  readonly name?: string;
  readonly email?: string;
  readonly preferredUsername?: string;
  /** `groups` (Entra: group object ids or names, as the app registration emits them). */
  readonly groups?: unknown;
  /** `roles` (Entra app roles); `realm_access.roles` in the keycloak flavour. */
  readonly roles?: unknown;
  /** Further ID token claims, laid over the others (any JSON: tests send odd values). */
  readonly claims?: Record<string, unknown>;
  /** Claims only the userinfo endpoint answers with (beside `sub`, `name`, `email`). */
  readonly userinfoClaims?: Record<string, unknown>;
}

export interface IdTokenTamper {
  /** Claims laid over the ID token's (`aud`, `nonce`, `exp`, `iss`, …); `undefined` removes one. */
  idTokenClaims?: Record<string, unknown>;
  /** Sign with a key the JWKS does not publish (under a published `kid`): a forged token. */
  forgeSignature?: boolean;
  /** Leave the ID token out of the token response. */
  omitIdToken?: boolean;
}

export interface Refusal {
  readonly endpoint: 'authorize' | 'token';
  readonly error: string;
  readonly description: string;
}

export interface EntraLikeProviderOptions {
  readonly clients: readonly EntraLikeClient[];
  readonly user?: EntraLikeUser;
  readonly flavour?: 'entra' | 'keycloak';
  readonly interactive?: boolean;
}

/** Microsoft Graph's application id: the audience Entra gives access tokens for `openid profile email`. */
const GRAPH_AUDIENCE = '00000003-0000-0000-c000-000000000000';
const CODE_SECONDS = 60;
const TOKEN_SECONDS = 3600;

interface IssuedCode {
  readonly client: EntraLikeClient;
  readonly redirectUri: string;
  readonly challenge: string;
  readonly nonce: string | undefined;
  readonly scopes: string[];
  readonly expiresAt: number;
  used: boolean;
}

export async function startEntraLikeProvider(options: EntraLikeProviderOptions): Promise<EntraLikeProvider> {
  const flavour = options.flavour ?? 'entra';
  const tenantId = randomUUID();
  const newKey = async () => {
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    const kid = randomBytes(8).toString('hex');
    const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid, use: 'sig', alg: 'RS256' };
    return { privateKey, kid, publicJwk };
  };
  let signing = await newKey();
  const forged = await generateKeyPair('RS256');
  const codes = new Map<string, IssuedCode>();
  const accessTokens = new Map<string, { subject: string }>();
  const hits = new Map<string, number>();
  // Entra's `sub` is pairwise (per application), Keycloak's the user's UUID.
  const defaultSubject = flavour === 'entra' ? randomBytes(32).toString('base64url') : randomUUID();
  const defaultObjectId = randomUUID();

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'text/plain' });
      response.end(String(error));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const paths =
    flavour === 'entra'
      ? {
          issuer: `/${tenantId}/v2.0`,
          authorize: `/${tenantId}/oauth2/v2.0/authorize`,
          token: `/${tenantId}/oauth2/v2.0/token`,
          jwks: `/${tenantId}/discovery/v2.0/keys`,
          userinfo: '/oidc/userinfo',
        }
      : {
          issuer: '/realms/test',
          authorize: '/realms/test/protocol/openid-connect/auth',
          token: '/realms/test/protocol/openid-connect/token',
          jwks: '/realms/test/protocol/openid-connect/certs',
          userinfo: '/realms/test/protocol/openid-connect/userinfo',
        };
  const issuer = `${origin}${paths.issuer}`;

  const provider: EntraLikeProvider = {
    origin,
    issuer,
    tenantId,
    authorizationEndpoint: `${origin}${paths.authorize}`,
    tokenEndpoint: `${origin}${paths.token}`,
    jwksUri: `${origin}${paths.jwks}`,
    userinfoEndpoint: `${origin}${paths.userinfo}`,
    accessTokenAudience: flavour === 'entra' ? GRAPH_AUDIENCE : 'account',
    user: options.user ?? {},
    tamper: {},
    down: false,
    refusals: [],
    authorizationRequests: [],
    tokenRequests: [],
    hits: (path) => hits.get(path) ?? 0,
    async rotateKeys() {
      signing = await newKey();
    },
    async signIn(authorizationUrl, signInOptions = {}) {
      let answer = await fetch(authorizationUrl, { redirect: 'manual' });
      if (answer.status === 200 && options.interactive === true) {
        const params = new URL(authorizationUrl).searchParams;
        params.set('decision', signInOptions.cancel === true ? 'cancel' : 'sign-in');
        answer = await fetch(provider.authorizationEndpoint, { method: 'POST', body: params, redirect: 'manual' });
      }
      const location = answer.headers.get('location');
      if (answer.status !== 302 || location === null) {
        throw new Error(`the provider answered ${answer.status} without a redirect: ${await answer.text()}`);
      }
      return new URL(location);
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };

  const discovery = (): Record<string, unknown> => ({
    issuer,
    authorization_endpoint: provider.authorizationEndpoint,
    token_endpoint: provider.tokenEndpoint,
    jwks_uri: provider.jwksUri,
    userinfo_endpoint: provider.userinfoEndpoint,
    response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
    response_modes_supported: ['query', 'fragment', 'form_post'],
    scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
    subject_types_supported: [flavour === 'entra' ? 'pairwise' : 'public'],
    id_token_signing_alg_values_supported: ['RS256'],
    token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
    claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'nonce', 'name', 'email', 'preferred_username', 'tid', 'oid'],
    // Entra lists no PKCE methods and no RFC 9207 support; Keycloak lists both.
    ...(flavour === 'keycloak'
      ? { code_challenge_methods_supported: ['plain', 'S256'], authorization_response_iss_parameter_supported: true }
      : { tenant_region_scope: 'EU', cloud_instance_name: 'microsoftonline.com' }),
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', origin);
    hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
    if (provider.down) return json(response, 503, { error: 'temporarily_unavailable' });
    if (url.pathname === `${paths.issuer}/.well-known/openid-configuration` && request.method === 'GET') {
      return json(response, 200, discovery());
    }
    if (url.pathname === paths.jwks && request.method === 'GET')
      return json(response, 200, { keys: [signing.publicJwk] });
    if (url.pathname === paths.authorize && request.method === 'GET') return authorize(url.searchParams, response);
    if (url.pathname === paths.authorize && request.method === 'POST') {
      return authorize(new URLSearchParams(await bodyOf(request)), response);
    }
    if (url.pathname === paths.token && request.method === 'POST') return token(request, response);
    if (url.pathname === paths.userinfo && request.method === 'GET') return userinfo(request, response);
    json(response, 404, { error: 'not_found' });
  }

  function authorize(params: URLSearchParams, response: ServerResponse): void {
    provider.authorizationRequests.push(new URLSearchParams(params));
    const client = options.clients.find((candidate) => candidate.clientId === params.get('client_id'));
    const redirectUri = params.get('redirect_uri');
    // RFC 6749 section 4.1.2.1: without a known client and its registered redirect URI, no redirect at all.
    if (client === undefined || redirectUri === null || !client.redirectUris.includes(redirectUri)) {
      const description =
        client === undefined
          ? 'AADSTS700016: Application with identifier was not found in the directory.'
          : 'AADSTS50011: The redirect URI specified in the request does not match the redirect URIs configured for the application.';
      provider.refusals.push({ endpoint: 'authorize', error: 'invalid_request', description });
      response.writeHead(400, { 'content-type': 'text/html; charset=utf-8' });
      response.end(`<!doctype html><title>Sign in</title><p>${description}</p>`);
      return;
    }
    const back = (answer: Record<string, string>) => {
      const target = new URL(redirectUri);
      const state = params.get('state');
      for (const [name, value] of Object.entries({
        ...answer,
        ...(state === null ? {} : { state }),
        ...(flavour === 'keycloak' ? { iss: issuer } : {}),
      })) {
        target.searchParams.set(name, value);
      }
      response.writeHead(302, { location: target.toString() });
      response.end();
    };
    const refuse = (error: string, description: string) => {
      provider.refusals.push({ endpoint: 'authorize', error, description });
      back({ error, error_description: description });
    };
    if (params.get('response_type') !== 'code') {
      return refuse('unsupported_response_type', 'AADSTS70005: response_type is not supported.');
    }
    if (params.has('resource')) {
      return refuse(
        'invalid_target',
        "AADSTS9010010: The resource parameter provided in the request doesn't match with the requested scopes.",
      );
    }
    const challenge = params.get('code_challenge');
    if (challenge === null || params.get('code_challenge_method') !== 'S256') {
      return refuse('invalid_request', 'AADSTS9002325: Proof Key for Code Exchange is required (S256).');
    }
    const decision = params.get('decision');
    if (options.interactive === true && decision === null) {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      const hidden = [...params]
        .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
        .join('');
      response.end(
        `<!doctype html><html lang="en"><title>Sign in</title><main><h1>Sign in</h1>` +
          `<form method="post" action="${escapeHtml(paths.authorize)}">${hidden}` +
          `<p>Signing in as ${escapeHtml(provider.user.name ?? 'the test user')}.</p>` +
          `<button name="decision" value="sign-in">Sign in</button> <button name="decision" value="cancel">Cancel</button>` +
          `</form></main></html>`,
      );
      return;
    }
    if (decision === 'cancel') return refuse('access_denied', 'AADSTS65004: User declined to consent.');
    const code = randomBytes(24).toString('base64url');
    codes.set(code, {
      client,
      redirectUri,
      challenge,
      nonce: params.get('nonce') ?? undefined,
      scopes: (params.get('scope') ?? '').split(' ').filter((scope) => scope !== ''),
      expiresAt: Date.now() + CODE_SECONDS * 1000,
      used: false,
    });
    back({ code, ...(flavour === 'entra' ? { session_state: randomUUID() } : {}) });
  }

  async function token(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const params = new URLSearchParams(await bodyOf(request));
    const authorization = request.headers.authorization;
    provider.tokenRequests.push({ params, authorization });
    const refuse = (status: number, error: string, description: string) => {
      provider.refusals.push({ endpoint: 'token', error, description });
      json(response, status, { error, error_description: description });
    };
    let clientId = params.get('client_id');
    let secret = params.get('client_secret');
    if (authorization?.startsWith('Basic ') === true) {
      const [id, password] = Buffer.from(authorization.slice(6), 'base64').toString('utf8').split(':');
      clientId = decodeURIComponent((id ?? '').replace(/\+/g, ' '));
      secret = decodeURIComponent((password ?? '').replace(/\+/g, ' '));
    }
    const client = options.clients.find((candidate) => candidate.clientId === clientId);
    if (client === undefined) return refuse(400, 'unauthorized_client', 'AADSTS700016: Application not found.');
    if (client.clientSecret !== undefined && secret !== client.clientSecret) {
      return refuse(401, 'invalid_client', 'AADSTS7000215: Invalid client secret provided.');
    }
    if (params.has('resource')) {
      return refuse(
        400,
        'invalid_target',
        "AADSTS9010010: The resource parameter provided in the request doesn't match with the requested scopes.",
      );
    }
    if (params.get('grant_type') !== 'authorization_code') {
      return refuse(400, 'unsupported_grant_type', 'AADSTS70003: The grant type is not supported.');
    }
    const issued = codes.get(params.get('code') ?? '');
    if (issued === undefined || issued.client !== client || issued.expiresAt < Date.now()) {
      return refuse(400, 'invalid_grant', 'AADSTS70008: The provided authorization code is invalid or has expired.');
    }
    if (issued.used)
      return refuse(400, 'invalid_grant', 'AADSTS54005: OAuth2 Authorization code was already redeemed.');
    issued.used = true;
    if (params.get('redirect_uri') !== issued.redirectUri) {
      return refuse(400, 'invalid_grant', 'AADSTS500117: The reply uri specified in the request does not match.');
    }
    const verifier = params.get('code_verifier') ?? '';
    if (createHash('sha256').update(verifier, 'ascii').digest('base64url') !== issued.challenge) {
      return refuse(400, 'invalid_grant', 'AADSTS501481: The Code_Verifier does not match the code_challenge.');
    }
    const subject = provider.user.subject ?? defaultSubject;
    const accessToken = await sign(
      {
        aud: provider.accessTokenAudience,
        iss: flavour === 'entra' ? `https://sts.windows.net/${tenantId}/` : issuer,
        sub: subject,
        scp: issued.scopes.join(' '),
        ...(flavour === 'entra' ? { tid: tenantId, appid: client.clientId } : { azp: client.clientId }),
      },
      false,
    );
    accessTokens.set(accessToken, { subject });
    const idToken = issued.scopes.includes('openid')
      ? await sign(idTokenClaims(client, subject, issued.nonce), true)
      : undefined;
    json(response, 200, {
      token_type: 'Bearer',
      scope: issued.scopes.join(' '),
      expires_in: TOKEN_SECONDS,
      access_token: accessToken,
      ...(idToken === undefined || provider.tamper.omitIdToken === true ? {} : { id_token: idToken }),
    });
  }

  function idTokenClaims(client: EntraLikeClient, subject: string, nonce: string | undefined): Record<string, unknown> {
    const now = Math.floor(Date.now() / 1000);
    const { user } = provider;
    const common = {
      iss: issuer,
      aud: client.clientId,
      sub: subject,
      iat: now,
      nbf: now,
      exp: now + TOKEN_SECONDS,
      ...(nonce === undefined ? {} : { nonce }),
      ...(user.name === undefined ? {} : { name: user.name }),
      ...(user.email === undefined ? {} : { email: user.email }),
      preferred_username: user.preferredUsername ?? user.email ?? 'test.user',
    };
    const flavoured =
      flavour === 'entra'
        ? {
            ver: '2.0',
            tid: tenantId,
            oid: user.objectId ?? defaultObjectId,
            ...(user.groups === undefined ? {} : { groups: user.groups }),
            ...(user.roles === undefined ? {} : { roles: user.roles }),
          }
        : {
            typ: 'ID',
            azp: client.clientId,
            ...(user.roles === undefined ? {} : { realm_access: { roles: user.roles } }),
            resource_access: { [client.clientId]: { roles: ['client-user'] } },
            ...(user.groups === undefined ? {} : { groups: user.groups }),
          };
    const claims: Record<string, unknown> = {
      ...common,
      ...flavoured,
      ...user.claims,
      ...provider.tamper.idTokenClaims,
    };
    for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
    return claims;
  }

  async function sign(claims: Record<string, unknown>, idToken: boolean): Promise<string> {
    const key: CryptoKey = idToken && provider.tamper.forgeSignature === true ? forged.privateKey : signing.privateKey;
    return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: signing.kid, typ: 'JWT' }).sign(key);
  }

  function userinfo(request: IncomingMessage, response: ServerResponse): void {
    const bearer = request.headers.authorization?.replace(/^Bearer /, '');
    const holder = bearer === undefined ? undefined : accessTokens.get(bearer);
    if (holder === undefined) return json(response, 401, { error: 'invalid_token' });
    const { user } = provider;
    json(response, 200, {
      sub: holder.subject,
      ...(user.name === undefined ? {} : { name: user.name }),
      ...(user.email === undefined ? {} : { email: user.email }),
      ...user.userinfoClaims,
    });
  }

  return provider;
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  response.end(JSON.stringify(body));
}

async function bodyOf(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

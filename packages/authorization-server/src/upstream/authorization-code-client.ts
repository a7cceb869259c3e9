import { fetchBoundedJson, jsonObject } from './bounded-json-fetch.js';
import { s256Challenge } from './pkce.js';
import { UpstreamSignInError } from './upstream-sign-in-error.js';

/**
 * Token responses are JSON objects (RFC 6749 section 5.1), small but for an
 * ID token listing many groups (a Keycloak user in thousands of them); the
 * claim mapping keeps what tokens carry bounded, this only what is read.
 */
const MAX_TOKEN_RESPONSE_BYTES = 256 * 1024;

/** The client as registered at the authorization server. */
export interface CodeClient {
  readonly clientId: string;
  /** Absent: a public client, PKCE alone (RFC 7636); present: `client_secret_basic`. */
  readonly clientSecret?: string | undefined;
}

export interface AuthorizationRequest {
  readonly endpoint: string;
  readonly client: CodeClient;
  readonly redirectUri: string;
  readonly scopes: readonly string[];
  readonly state: string;
  readonly codeVerifier: string;
  /**
   * Further parameters, e.g. `nonce` (OpenID Connect Core 1.0 section
   * 3.1.2.1) or `resource` (RFC 8707 section 2) where the server is the
   * client's own; never the parameters of another party's request.
   */
  readonly parameters?: Readonly<Record<string, string>>;
}

/**
 * The authorization request URL of the code grant (RFC 6749 section 4.1.1)
 * with PKCE S256 (RFC 7636 section 4.3). The endpoint's own query is kept
 * and the request's parameters are added to it (RFC 6749 section 3.1).
 */
export function authorizationRequestUrl(request: AuthorizationRequest): string {
  const url = new URL(request.endpoint);
  const parameters: Record<string, string> = {
    ...request.parameters,
    response_type: 'code',
    client_id: request.client.clientId,
    redirect_uri: request.redirectUri,
    scope: request.scopes.join(' '),
    state: request.state,
    code_challenge: s256Challenge(request.codeVerifier),
    code_challenge_method: 'S256',
  };
  for (const [name, value] of Object.entries(parameters)) url.searchParams.set(name, value);
  return url.toString();
}

export interface CodeRedemption {
  readonly endpoint: string;
  readonly client: CodeClient;
  readonly code: string;
  readonly redirectUri: string;
  readonly codeVerifier: string;
  /** Further form parameters, e.g. `resource` (RFC 8707 section 2.2) where the server is the client's own. */
  readonly parameters?: Readonly<Record<string, string>>;
  readonly fetch: typeof fetch;
}

/**
 * Redeems an authorization code (RFC 6749 section 4.1.3) with the PKCE
 * verifier (RFC 7636 section 4.5). A confidential client authenticates with
 * HTTP Basic (`client_secret_basic`, RFC 6749 section 2.3.1), a public one
 * only names itself. Returns the token response's JSON object (section 5.1);
 * an error response (section 5.2) is `upstream_refused` with its `error`
 * code, a 5xx `upstream_unreachable`, anything else not JSON
 * `upstream_misconfigured`.
 */
export async function redeemAuthorizationCode(redemption: CodeRedemption): Promise<Record<string, unknown>> {
  const body = new URLSearchParams({
    ...redemption.parameters,
    grant_type: 'authorization_code',
    code: redemption.code,
    redirect_uri: redemption.redirectUri,
    code_verifier: redemption.codeVerifier,
  });
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  const { clientId, clientSecret } = redemption.client;
  if (clientSecret === undefined) body.set('client_id', clientId);
  else headers.authorization = basicCredentials(clientId, clientSecret);
  const answer = await fetchBoundedJson(
    redemption.endpoint,
    { method: 'POST', headers, body },
    { fetch: redemption.fetch, maxBytes: MAX_TOKEN_RESPONSE_BYTES, what: 'token endpoint' },
  );
  const json = jsonObject(answer.body);
  if (answer.status >= 200 && answer.status < 300 && json !== undefined) return json;
  const code = oauthErrorCode(json?.error);
  if (answer.status >= 400 && answer.status < 500 && code !== undefined) {
    throw new UpstreamSignInError(
      'upstream_refused',
      `The identity provider refused the sign-in (${code}).`,
      `token endpoint answered ${answer.status} ${code}: ${describe(json?.error_description)}`,
    );
  }
  throw new UpstreamSignInError(
    answer.status >= 500 ? 'upstream_unreachable' : 'upstream_misconfigured',
    answer.status >= 500
      ? 'The identity provider could not be reached. Try again later.'
      : 'The identity provider answered the token request in a way the gateway cannot use.',
    `token endpoint answered ${answer.status}${json === undefined ? ' without a JSON object' : ''}`,
  );
}

/**
 * RFC 6749 section 2.3.1: the client id and secret of HTTP Basic are each
 * form-urlencoded (Appendix B) before they are joined and base64-encoded.
 */
export function basicCredentials(id: string, secret: string): string {
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(id)}:${encode(secret)}`, 'utf8').toString('base64')}`;
}

/**
 * An OAuth `error` value as RFC 6749 section 5.2 allows it (%x20-21 /
 * %x23-5B / %x5D-7E), at most 100 characters; undefined otherwise, so a
 * value the provider (or whoever forged a callback) sent can be put in a
 * public message.
 */
export function oauthErrorCode(value: unknown): string | undefined {
  return typeof value === 'string' && /^[\x20\x21\x23-\x5b\x5d-\x7e]{1,100}$/.test(value) ? value : undefined;
}

/** A provider's `error_description`, bounded, for the logs. */
export function describe(value: unknown): string {
  return typeof value === 'string' ? value.slice(0, 500) : 'no description';
}

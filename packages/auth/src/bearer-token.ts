import { AuthError } from './auth-error.js';

/**
 * RFC 6750 section 2.1: `b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~"
 * / "+" / "/" ) *"="`. Anything else after `Bearer ` is a malformed request.
 */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** The inputs a framework adapter hands over; nothing framework-specific. */
export interface BearerTokenRequest {
  /** Node's `req.rawHeaders` (name, value, name, value, …): `req.headers` keeps only the first Authorization. */
  readonly rawHeaders: readonly string[];
  /** The request target (path and query), e.g. `req.url`. */
  readonly url: string;
  /** Whether a form-encoded body carries an `access_token` field (RFC 6750 section 2.2). */
  readonly bodyHasAccessToken: boolean;
}

/**
 * The bearer token of a request, taken only from the Authorization header
 * (MCP authorization, "Token Requirements": header only, never the query).
 *
 * Returns `undefined` when the request carries no bearer credentials: no
 * Authorization header (the first step of every OAuth flow), an empty one, or
 * one of another scheme (`Basic`, `DPoP`, …). RFC 6750 section 3.1: when "the
 * request lacks any authentication information (e.g., the client was unaware
 * that authentication is necessary or attempted using an unsupported
 * authentication method), the resource server SHOULD NOT include an error
 * code", so the caller answers with a plain challenge.
 *
 * Throws {@link AuthError} 400 `invalid_request`: a token in the query string
 * (`access_token`) or in a form body, two Authorization headers, or `Bearer`
 * without a well-formed token (RFC 6750 section 3.1: "uses more than one
 * method", "repeats the same parameter", "otherwise malformed").
 *
 * The scheme is matched case-insensitively (RFC 9110 section 11.1).
 */
export function extractBearerToken(request: BearerTokenRequest): string | undefined {
  if (hasQueryAccessToken(request.url)) {
    throw new AuthError('invalid_request', 'Send the access token in the Authorization header, never in the URL');
  }
  if (request.bodyHasAccessToken) {
    throw new AuthError('invalid_request', 'Send the access token in the Authorization header, never in the body');
  }
  const values: string[] = [];
  for (let i = 0; i + 1 < request.rawHeaders.length; i += 2) {
    if (request.rawHeaders[i]?.toLowerCase() === 'authorization') values.push(request.rawHeaders[i + 1] ?? '');
  }
  if (values.length === 0) return undefined;
  if (values.length > 1) {
    throw new AuthError('invalid_request', 'The request carries more than one Authorization header');
  }
  // RFC 9110 section 11.4: credentials = auth-scheme [ 1*SP ( token68 / #auth-param ) ].
  const match = /^([^ ]+)(?: +(.*))?$/.exec(values[0]!.trim());
  if (match === null || match[1]!.toLowerCase() !== 'bearer') return undefined;
  const token = match[2];
  if (token === undefined || !B64TOKEN.test(token)) {
    throw new AuthError('invalid_request', 'The Bearer credentials are malformed');
  }
  return token;
}

function hasQueryAccessToken(url: string): boolean {
  const q = url.indexOf('?');
  if (q === -1) return false;
  const hash = url.indexOf('#', q);
  const query = url.slice(q + 1, hash === -1 ? undefined : hash);
  try {
    return new URLSearchParams(query).has('access_token');
  } catch {
    // URLSearchParams does not throw on odd input, but be safe: a query we
    // cannot read might hide a token.
    return true;
  }
}

import {
  decodeJwt,
  decodeProtectedHeader,
  errors,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyOptions,
  type ProtectedHeaderParameters,
} from 'jose';
import { AuthError } from './auth-error.js';
import { KeysUnavailableError } from './jwks-cache.js';
import { ASYMMETRIC_ALGORITHMS } from './issuer-settings.js';
import { principalFromClaims } from './principal-from-claims.js';
import { verifyByIntrospection } from './verify-introspection.js';
import type { TrustedIssuer, Verified, VerificationContext } from './verification-context.js';

const ASYMMETRIC = new Set<string>(ASYMMETRIC_ALGORITHMS);
/**
 * Header parameters that carry or point at keys chosen by whoever made the
 * token (RFC 7515 sections 4.1.2 to 4.1.6). A resource server that honoured
 * them would let anyone sign tokens (RFC 8725 section 3.10); keys come only
 * from the issuer's configuration, so tokens carrying them are refused
 * outright rather than silently ignored.
 */
const KEY_REFERENCE_HEADERS = ['jku', 'x5u', 'jwk', 'x5c'] as const;

/** A compact JWS has exactly three dot-separated parts (RFC 7515 section 7.1). */
export function isCompactJws(token: string): boolean {
  return token.split('.').length === 3;
}

/** Verifies a JWT access token against the issuer its `iss` names. */
export async function verifyJwt(token: string, ctx: VerificationContext, signal?: AbortSignal): Promise<Verified> {
  let header: ProtectedHeaderParameters;
  let unverified: JWTPayload;
  try {
    // Read without trusting: only to choose the issuer. Everything is checked
    // again by jwtVerify against that issuer's keys.
    header = decodeProtectedHeader(token);
    unverified = decodeJwt(token);
  } catch {
    throw new AuthError('invalid_token', 'The token is malformed');
  }
  if (KEY_REFERENCE_HEADERS.some((name) => Object.hasOwn(header, name))) {
    throw new AuthError(
      'invalid_token',
      'The token names or carries its own key (jku, x5u, jwk or x5c header); that is not accepted',
    );
  }
  const issuer = typeof unverified.iss === 'string' ? ctx.issuers.get(unverified.iss) : undefined;
  if (issuer === undefined) {
    throw new AuthError('invalid_token', 'The token was not issued by an issuer this resource trusts', {
      received: { iss: shown(unverified.iss) },
      setting: `auth.issuers[].issuer must equal the token's iss exactly (trusted now: ${[...ctx.issuers.keys()].join(', ') || 'none'})`,
    });
  }
  const settings = issuer.settings;
  // Checked before either way of verifying: an ID token of the same issuer is
  // as active and as well signed as an access token (RFC 8725 section 3.11).
  if (!typeAllowed(header.typ, settings.tokenTypes)) {
    throw new AuthError('invalid_token', "The token's type (typ header) is not accepted", {
      received: { typ: shown(header.typ) ?? '(none)' },
      setting: `auth.issuers[issuer=${settings.issuer}].tokenTypes (now ${settings.tokenTypes.join(', ')}; "jwt" or "none" admit it, RFC 8725 section 3.11)`,
    });
  }
  if (issuer.keys === undefined) {
    // An issuer configured for introspection only: ask it (it is authoritative
    // for its own tokens, and its answer's `iss` is checked).
    return verifyByIntrospection(token, issuer, ctx, signal);
  }
  if (typeof header.alg !== 'string' || !ASYMMETRIC.has(header.alg) || !settings.algorithms.includes(header.alg)) {
    throw new AuthError('invalid_token', "The token's signing algorithm is not allowed", {
      received: { alg: shown(header.alg) },
      setting: `auth.issuers[issuer=${settings.issuer}].algorithms (now ${settings.algorithms.join(', ')}; asymmetric only)`,
    });
  }
  const now = ctx.now();
  const options: JWTVerifyOptions = {
    algorithms: [...settings.algorithms],
    issuer: settings.issuer,
    audience: [...issuer.audiences],
    clockTolerance: settings.clockToleranceSeconds,
    currentDate: new Date(now),
    // RFC 9068 section 2.2: exp and sub are REQUIRED; a token without exp
    // would otherwise be valid (and cached) forever.
    requiredClaims: ['exp', 'sub'],
  };
  let payload: JWTPayload;
  try {
    payload = await verifySignedClaims(token, issuer, options, ctx, signal);
  } catch (error) {
    if (!(error instanceof AuthError) || error.message !== AUDIENCE_REFUSED) throw error;
    // Signed by the trusted issuer, but for another audience: say which, for the operator.
    throw new AuthError('invalid_token', AUDIENCE_REFUSED, {
      received: { aud: shown(unverified.aud) },
      setting: `the tenant's resource URI ${issuer.audiences[0]} in aud (RFC 8707), or auth.issuers[issuer=${settings.issuer}].audiences (now ${settings.audiences.join(', ') || 'none'})`,
    });
  }
  // jose checks `iat` only when maxTokenAge is set; a token minted
  // in the future means a broken or hostile clock at the issuer.
  if (typeof payload.iat === 'number' && payload.iat > now / 1000 + settings.clockToleranceSeconds) {
    throw new AuthError('invalid_token', 'The token was issued in the future');
  }
  const exp = payload.exp!;
  return { principal: principalFromClaims(payload, settings, exp), cacheUntil: exp * 1000 };
}

async function verifySignedClaims(
  token: string,
  issuer: TrustedIssuer,
  options: JWTVerifyOptions,
  ctx: VerificationContext,
  signal: AbortSignal | undefined,
): Promise<JWTPayload> {
  const keys = issuer.keys!;
  try {
    const { payload } = await jwtVerify(token, (header, jws) => keys.getKey(header, jws, signal), options);
    return payload;
  } catch (error) {
    // The caller went away while a refetch was pending: not the token's fault.
    if (signal?.aborted === true) throw signal.reason;
    if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw toAuthError(error, ctx);
    // No `kid` and several keys of the right type: try each (jose's
    // documented way; the set is the issuer's own, so it is small).
    for await (const key of error) {
      try {
        const { payload } = await jwtVerify(token, key, options);
        return payload;
      } catch (attempt) {
        if (!(attempt instanceof errors.JWSSignatureVerificationFailed)) throw toAuthError(attempt, ctx);
      }
    }
    throw new AuthError('invalid_token', "The token's signature is invalid");
  }
}

/**
 * RFC 7515 section 4.1.9: `typ` is compared case-insensitively and the
 * `application/` prefix may be omitted. RFC 9068 section 2.1 names `at+jwt`,
 * and section 4 says a resource server MUST check it; `jwt` and an absent
 * `typ` pass only where the issuer's configuration lists them.
 */
function typeAllowed(typ: unknown, allowed: IssuerAllowedTypes): boolean {
  if (typ === undefined) return allowed.includes('none');
  if (typeof typ !== 'string') return false;
  const normalized = typ.toLowerCase().replace(/^application\//, '');
  return (normalized === 'at+jwt' || normalized === 'jwt') && allowed.includes(normalized);
}
type IssuerAllowedTypes = TrustedIssuer['settings']['tokenTypes'];

const AUDIENCE_REFUSED = 'The token was not issued for this resource';

/** A received header or claim value as the operator's log shows it: strings and string lists only, bounded. */
function shown(value: unknown): string | string[] | undefined {
  const cut = (text: string) => (text.length > 200 ? `${text.slice(0, 200)}…` : text);
  if (typeof value === 'string') return cut(value);
  if (Array.isArray(value)) return value.slice(0, 10).map((item) => cut(String(item)));
  return value === undefined ? undefined : `(${typeof value})`;
}

/** Public, token-free messages for jose's failures; the jose code goes to the log. */
function toAuthError(error: unknown, ctx: VerificationContext): AuthError {
  if (error instanceof AuthError) return error;
  if (error instanceof KeysUnavailableError) {
    return new AuthError('invalid_token', "The issuer's signing keys are unavailable right now; try again later");
  }
  if (error instanceof errors.JWTExpired) return new AuthError('invalid_token', 'The token has expired');
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'nbf') return new AuthError('invalid_token', 'The token is not valid yet');
    if (error.claim === 'aud') return new AuthError('invalid_token', AUDIENCE_REFUSED);
    if (error.reason === 'missing') return new AuthError('invalid_token', `The token has no "${error.claim}" claim`);
    return new AuthError('invalid_token', `The token's "${error.claim}" claim is invalid`);
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return new AuthError('invalid_token', "The token's signature is invalid");
  }
  if (error instanceof errors.JWKSNoMatchingKey) {
    return new AuthError('invalid_token', "No key of the token's issuer matches the token");
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return new AuthError('invalid_token', "The token's signing algorithm is not allowed");
  }
  if (error instanceof errors.JOSENotSupported) {
    return new AuthError('invalid_token', 'The token uses a feature this resource does not support');
  }
  if (!(error instanceof errors.JOSEError)) {
    // Not an input problem jose recognised (e.g. a key it refuses to use):
    // still fail closed, but say so in the log.
    ctx.logger.warn({ reason: error instanceof Error ? error.name : 'unknown' }, 'unexpected error verifying a token');
  }
  return new AuthError('invalid_token', 'The token is malformed');
}

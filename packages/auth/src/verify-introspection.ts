import { AuthError } from './auth-error.js';
import { introspectToken } from './introspection.js';
import { principalFromClaims } from './principal-from-claims.js';
import {
  audienceMatches,
  type TrustedIssuer,
  type Verified,
  type VerificationContext,
} from './verification-context.js';

/**
 * Verifies a token by RFC 7662 introspection at its issuer. `active: false`
 * refuses it; a returned `iss` or `aud` is held to the same rules as a JWT's.
 * An unreachable endpoint refuses the token too (fail closed) and is never
 * cached, so the next request asks again.
 */
export async function verifyByIntrospection(
  token: string,
  issuer: TrustedIssuer,
  ctx: VerificationContext,
  signal?: AbortSignal,
): Promise<Verified> {
  const settings = issuer.settings;
  const client = settings.introspection;
  if (client === undefined) throw new AuthError('invalid_token', 'The token is not a JWT this resource can verify');
  let answer: Record<string, unknown>;
  try {
    const abort = signal === undefined ? ctx.closed : AbortSignal.any([ctx.closed, signal]);
    answer = await introspectToken(token, client, { fetch: ctx.fetch, signal: abort });
  } catch (error) {
    if (signal?.aborted === true) throw signal.reason;
    ctx.logger.warn(
      { issuer: settings.issuer, reason: error instanceof Error ? error.message : 'unknown' },
      'token introspection failed',
    );
    throw new AuthError('invalid_token', 'The token could not be verified: the authorization server did not answer');
  }
  if (answer.active !== true) throw new AuthError('invalid_token', 'The token is not active');
  if (answer.iss !== undefined && answer.iss !== settings.issuer) {
    throw new AuthError('invalid_token', 'The token was not issued by an issuer this resource trusts');
  }
  if (answer.aud !== undefined && !audienceMatches(answer.aud, issuer.audiences)) {
    throw new AuthError('invalid_token', 'The token was not issued for this resource');
  }
  const now = ctx.now();
  const tolerance = settings.clockToleranceSeconds;
  const { exp, nbf } = answer;
  if ((exp !== undefined && typeof exp !== 'number') || (nbf !== undefined && typeof nbf !== 'number')) {
    throw new AuthError('invalid_token', "The token's time claims are malformed");
  }
  if (exp !== undefined && exp + tolerance <= now / 1000) throw new AuthError('invalid_token', 'The token has expired');
  if (nbf !== undefined && nbf - tolerance > now / 1000)
    throw new AuthError('invalid_token', 'The token is not valid yet');
  // Reuse the answer until exp, never longer than the configured cap (a
  // revoked token stays usable at most that long).
  const cap = now + client.cacheMaxSeconds * 1000;
  const cacheUntil = exp === undefined ? cap : Math.min(exp * 1000, cap);
  const expiresAt = exp ?? Math.floor(cap / 1000);
  return { principal: principalFromClaims(answer, settings, expiresAt), cacheUntil };
}

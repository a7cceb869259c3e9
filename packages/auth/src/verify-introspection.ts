import { AuthError } from './auth-error.js';
import { egressFetch } from './egress-fetch.js';
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
 * refuses it; a returned `iss` is held to the same rule as a JWT's, and `aud`
 * is required like a JWT's (see {@link checkAudience}).
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
    const fetch = settings.egress === undefined ? ctx.fetch : egressFetch(settings.egress);
    answer = await introspectToken(token, client, { fetch, signal: abort });
  } catch (error) {
    if (signal?.aborted === true) throw signal.reason;
    ctx.observer?.introspected?.('error');
    ctx.logger.warn(
      { issuer: settings.issuer, reason: error instanceof Error ? error.message : 'unknown' },
      'token introspection failed',
    );
    throw new AuthError('invalid_token', 'The token could not be verified: the authorization server did not answer');
  }
  ctx.observer?.introspected?.(answer.active === true ? 'active' : 'inactive');
  if (answer.active !== true) throw new AuthError('invalid_token', 'The token is not active');
  if (answer.iss !== undefined && answer.iss !== settings.issuer) {
    throw new AuthError('invalid_token', 'The token was not issued by an issuer this resource trusts');
  }
  checkAudience(answer, issuer);
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

/**
 * MCP authorization, "Token Audience Binding": the server MUST validate that
 * a token was issued specifically for it (RFC 8707; RFC 9700 section 2.3). An
 * active answer without `aud` says nothing about whom the token is for: any
 * opaque token of the same authorization server, minted for another API,
 * client or tenant, would read this tenant's resources. So `aud` is required
 * and must name the tenant's canonical URI or a configured audience. The one
 * exception is an issuer configured with `dangerouslyAcceptMissingAudience`,
 * and then only for tokens of the clients it lists.
 */
function checkAudience(answer: Readonly<Record<string, unknown>>, issuer: TrustedIssuer): void {
  const introspection = issuer.settings.introspection;
  const clientIds = introspection?.clientIds;
  if (clientIds !== undefined) {
    // RFC 7662 section 2.2: `client_id` names the client the token was issued to.
    if (typeof answer.client_id !== 'string' || !clientIds.includes(answer.client_id)) {
      throw new AuthError('invalid_token', 'The token was issued to a client this resource does not accept');
    }
  }
  if (answer.aud === undefined) {
    if (introspection?.dangerouslyAcceptMissingAudience === true && clientIds !== undefined && clientIds.length > 0) {
      return;
    }
    throw new AuthError('invalid_token', 'The token names no audience, so it cannot be bound to this resource');
  }
  if (!audienceMatches(answer.aud, issuer.audiences)) {
    throw new AuthError('invalid_token', 'The token was not issued for this resource');
  }
}

import { errors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { UpstreamSignInError } from './upstream-sign-in-error.js';

/** Clock difference tolerated between the gateway and the provider. */
export const ID_TOKEN_CLOCK_TOLERANCE_SECONDS = 60;

/**
 * Asymmetric JWS algorithms only: a symmetric one (HS256, keyed with the
 * client secret) is never accepted, nor `none` (OpenID Connect Core 1.0
 * section 3.1.3.7, steps 6 to 8, let a client require the algorithm it registered).
 */
const ASYMMETRIC_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];

export interface IdTokenExpectations {
  readonly issuer: string;
  readonly clientId: string;
  readonly nonce: string;
  /** `id_token_signing_alg_values_supported`; absent: any asymmetric algorithm its keys allow. */
  readonly algorithms?: readonly string[] | undefined;
  readonly keys: JWTVerifyGetKey;
  /** The time to check `exp` and `iat` against (ms). */
  readonly now: number;
}

/**
 * Validates an ID token as OpenID Connect Core 1.0 section 3.1.3.7 requires:
 * signed by a key of the provider's JWKS with an asymmetric algorithm it
 * lists, `iss` exactly the provider's issuer, `aud` containing the client id
 * (and, with several audiences, `azp` naming it; an `azp` present must be
 * the client id), `exp` in the future and `iat` present, and `nonce` equal
 * to the one this sign-in sent (section 3.1.2.1; a replayed token carries
 * another sign-in's). Returns its claims; anything wrong is
 * `id_token_invalid`, with the failed check in `detail`.
 */
export async function verifyIdToken(idToken: string, expect: IdTokenExpectations): Promise<Record<string, unknown>> {
  const invalid = (detail: string, cause?: unknown) =>
    new UpstreamSignInError(
      'id_token_invalid',
      'The identity provider’s answer could not be verified, so the sign-in was stopped.',
      `ID token: ${detail}`,
      { cause },
    );
  const algorithms =
    expect.algorithms === undefined
      ? ASYMMETRIC_ALGORITHMS
      : expect.algorithms.filter((alg) => ASYMMETRIC_ALGORITHMS.includes(alg));
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(idToken, expect.keys, {
      issuer: expect.issuer,
      audience: expect.clientId,
      algorithms,
      requiredClaims: ['sub', 'iat', 'exp'],
      clockTolerance: ID_TOKEN_CLOCK_TOLERANCE_SECONDS,
      currentDate: new Date(expect.now),
    }));
  } catch (error) {
    if (error instanceof UpstreamSignInError) throw error;
    if (error instanceof errors.JOSEError) throw invalid(`${error.code}: ${error.message}`, error);
    throw invalid('not a JWT', error);
  }
  const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if (payload.azp !== undefined && payload.azp !== expect.clientId) throw invalid('"azp" is not this client');
  if (audiences.length > 1 && payload.azp === undefined) throw invalid('several audiences and no "azp"');
  if (typeof payload.nonce !== 'string' || payload.nonce !== expect.nonce) {
    throw invalid('"nonce" is not the one this sign-in sent');
  }
  return payload;
}

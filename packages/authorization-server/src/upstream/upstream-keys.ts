import { createLocalJWKSet, errors, type FlattenedJWSInput, type JSONWebKeySet, type JWSHeaderParameters } from 'jose';
import { fetchBoundedJson, jsonObject } from './bounded-json-fetch.js';
import { UpstreamSignInError } from './upstream-sign-in-error.js';

const MAX_JWKS_BYTES = 512 * 1024;
/** Keys are read again once they are this old. */
export const KEYS_FRESH_MS = 10 * 60_000;
/** An ID token with an unknown `kid` reads the keys again at most this often, so forged kids cannot hammer the provider. */
export const KEYS_REFETCH_COOLDOWN_MS = 30_000;

type KeyResolver = ReturnType<typeof createLocalJWKSet>;

/**
 * The upstream's signing keys (its `jwks_uri`), as jose's key resolver for
 * `jwtVerify`. An unknown `kid` (the provider rotated) reads them again, at
 * most once per cooldown; key selection by `kid`, `kty`, `alg` and `use` is
 * jose's createLocalJWKSet.
 */
export function cachedUpstreamKeys(fetcher: typeof fetch, now: () => number) {
  let known: { uri: string; keys: KeyResolver; readAt: number } | undefined;
  // Only reads for an unknown `kid` count: a rotation right after the first read is still picked up.
  let refetchedAt = Number.NEGATIVE_INFINITY;

  const read = async (uri: string): Promise<KeyResolver> => {
    const { status, body } = await fetchBoundedJson(
      uri,
      { method: 'GET' },
      { fetch: fetcher, maxBytes: MAX_JWKS_BYTES, what: 'JWKS' },
    );
    const jwks = jsonObject(body);
    if (status !== 200 || jwks === undefined || !Array.isArray(jwks.keys)) {
      throw new UpstreamSignInError(
        status >= 500 ? 'upstream_unreachable' : 'upstream_misconfigured',
        status >= 500
          ? 'The identity provider could not be reached. Try again later.'
          : "The identity provider's signing keys cannot be read; the tenant's administrator must check its settings.",
        `JWKS ${uri}: HTTP ${status}${jwks === undefined ? ', not a JSON object' : ''}`,
      );
    }
    const keys = createLocalJWKSet(jwks as unknown as JSONWebKeySet);
    known = { uri, keys, readAt: now() };
    return keys;
  };

  /** The resolver for tokens of the upstream whose JWKS is at `uri`. */
  return (uri: string) => async (header: JWSHeaderParameters, token: FlattenedJWSInput) => {
    const current =
      known !== undefined && known.uri === uri && now() - known.readAt < KEYS_FRESH_MS ? known.keys : await read(uri);
    try {
      return await current(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey) || now() - refetchedAt < KEYS_REFETCH_COOLDOWN_MS) throw error;
      refetchedAt = now();
      return (await read(uri))(header, token);
    }
  };
}

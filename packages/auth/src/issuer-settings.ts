import { ASYMMETRIC_ALGORITHMS, type EgressGuard } from '@mcpgw/core';
import type { JWK } from 'jose';

export { ASYMMETRIC_ALGORITHMS };

/** Where an issuer's verification keys come from. */
export type IssuerKeysSource =
  /** A JWKS URL, fetched and cached (see `jwks-cache.ts`). */
  | { readonly jwksUri: string }
  /** The `jwks_uri` of the issuer's RFC 8414 or OpenID Connect discovery metadata. */
  | { readonly discovery: true }
  /** Pinned public keys (air-gapped sites); never fetched. */
  | { readonly jwks: { readonly keys: readonly JWK[] } };

/** One identity provider a tenant trusts. */
export interface IssuerSettings {
  /** The exact `iss` of its tokens (compared as a plain string). */
  readonly issuer: string;
  /** Verification keys for its JWTs. Optional only for an issuer used solely through introspection. */
  readonly keys?: IssuerKeysSource | undefined;
  /** Allowed JWS algorithms, a subset of {@link ASYMMETRIC_ALGORITHMS}. */
  readonly algorithms: readonly string[];
  /** Audiences accepted in addition to the tenant's canonical resource URI. */
  readonly audiences: readonly string[];
  /**
   * Allowed JOSE `typ` values; `none` allows an absent `typ`. RFC 9068
   * section 4 says resource servers MUST check for `at+jwt`; `jwt` and `none`
   * also let the issuer's ID tokens through (RFC 8725 section 3.11).
   */
  readonly tokenTypes: ReadonlyArray<'at+jwt' | 'jwt' | 'none'>;
  /** `scope` (space-delimited string, RFC 9068) or e.g. `scp` (string or array). */
  readonly scopeClaim: string;
  /** A string or array claim holding groups or roles. */
  readonly groupsClaim?: string | undefined;
  /** Leeway for `exp`, `nbf` and `iat`, 0 to 60 seconds. */
  readonly clockToleranceSeconds: number;
  /**
   * Present for an issuer a tenant admin configured: its key, discovery and
   * introspection fetches connect only where this guard allows. A refused
   * fetch is an unreachable issuer (its keys unavailable: 401).
   */
  readonly egress?: EgressGuard | undefined;
  /** RFC 7662 introspection of opaque tokens, with client_secret_basic. */
  readonly introspection?:
    | {
        readonly endpoint: string;
        readonly clientId: string;
        readonly clientSecret: string;
        /** Upper bound on how long an introspection answer is reused (0 = never). */
        readonly cacheMaxSeconds: number;
        /**
         * Accept an active answer that carries no `aud` at all. Such a token
         * may have been minted for any API, client or tenant of the same
         * authorization server (MCP authorization "Token Audience Binding",
         * RFC 9700 section 2.3), so this needs {@link clientIds}.
         */
        readonly dangerouslyAcceptMissingAudience?: boolean | undefined;
        /** When given, an answer's `client_id` must be one of these (required by the option above). */
        readonly clientIds?: readonly string[] | undefined;
      }
    | undefined;
}

const ASYMMETRIC = new Set<string>(ASYMMETRIC_ALGORITHMS);
const TOKEN_TYPES = new Set(['at+jwt', 'jwt', 'none']);

/**
 * Checks settings once, when a verifier is built (fail at startup, not on the
 * first request). The config layer validates the same rules; this repeats the
 * security-relevant ones so the package is safe on its own. Throws TypeError
 * naming the issuer and the field.
 */
export function validateIssuerSettings(settings: IssuerSettings): void {
  const where = `issuer ${JSON.stringify(settings.issuer)}`;
  if (typeof settings.issuer !== 'string' || settings.issuer === '')
    throw new TypeError('issuer must be a non-empty string');
  if (settings.algorithms.length === 0) throw new TypeError(`${where}: algorithms must not be empty`);
  for (const alg of settings.algorithms) {
    if (!ASYMMETRIC.has(alg)) {
      throw new TypeError(`${where}: algorithm ${JSON.stringify(alg)} is not an allowed asymmetric JWS algorithm`);
    }
  }
  if (settings.tokenTypes.length === 0 || settings.tokenTypes.some((t) => !TOKEN_TYPES.has(t))) {
    throw new TypeError(`${where}: tokenTypes must be a non-empty list of "at+jwt", "jwt", "none"`);
  }
  const tolerance = settings.clockToleranceSeconds;
  if (!Number.isFinite(tolerance) || tolerance < 0 || tolerance > 60) {
    throw new TypeError(`${where}: clockToleranceSeconds must be between 0 and 60`);
  }
  if (settings.scopeClaim === '') throw new TypeError(`${where}: scopeClaim must not be empty`);
  if (settings.keys === undefined && settings.introspection === undefined) {
    throw new TypeError(`${where}: give keys (jwksUri, discovery or jwks) or introspection`);
  }
  if (settings.keys !== undefined && 'jwks' in settings.keys) {
    for (const key of settings.keys.jwks.keys) {
      if ('d' in key || key.kty === 'oct') throw new TypeError(`${where}: inline jwks must hold public keys only`);
    }
  }
  const introspection = settings.introspection;
  if (introspection !== undefined) {
    if (!Number.isFinite(introspection.cacheMaxSeconds) || introspection.cacheMaxSeconds < 0) {
      throw new TypeError(`${where}: introspection.cacheMaxSeconds must be >= 0`);
    }
    if (introspection.clientIds !== undefined && introspection.clientIds.some((id) => id === '')) {
      throw new TypeError(`${where}: introspection.clientIds must not contain empty strings`);
    }
    if (introspection.dangerouslyAcceptMissingAudience === true && (introspection.clientIds ?? []).length === 0) {
      throw new TypeError(
        `${where}: introspection.dangerouslyAcceptMissingAudience needs a non-empty introspection.clientIds allowlist`,
      );
    }
  }
}

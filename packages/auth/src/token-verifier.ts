import type { Logger, Principal } from '@mcpgw/core';
import { AuthError } from './auth-error.js';
import { egressFetch } from './egress-fetch.js';
import { IssuerKeySet } from './jwks-cache.js';
import { validateIssuerSettings, type IssuerSettings } from './issuer-settings.js';
import { DEFAULT_TOKEN_CACHE_SIZE, TokenCache, tokenHash } from './token-cache.js';
import type { VerifierObserver } from './verifier-observer.js';
import type { TrustedIssuer, VerificationContext, Verified } from './verification-context.js';
import { verifyByIntrospection } from './verify-introspection.js';
import { isCompactJws, verifyJwt } from './verify-jwt.js';

/** Verifies one tenant's access tokens. */
export interface TokenVerifier {
  /**
   * The Principal of a valid token. Rejects with {@link AuthError} (401
   * `invalid_token`) for any token it does not accept, including when the
   * issuer cannot be reached to check it; rejects with `signal.reason` when
   * `signal` aborts while waiting on the network.
   */
  verify(token: string, signal?: AbortSignal): Promise<Principal>;
  /** Stops network activity (in-flight fetches abort, none start) and drops cached tokens. */
  close(): void;
}

export interface TokenVerifierOptions {
  /** The tenant's canonical resource URI (RFC 8707): always an accepted `aud`. */
  readonly resource: string;
  /** The identity providers the tenant trusts; `iss` values must be distinct. */
  readonly issuers: readonly IssuerSettings[];
  readonly logger: Logger;
  /** For tests and proxies; default the global fetch. */
  readonly fetch?: typeof fetch;
  /** Clock in ms since the epoch; default Date.now. */
  readonly now?: () => number;
  /** Verified tokens remembered (by SHA-256) until their exp; default 10,000. */
  readonly tokenCacheSize?: number;
  /** Told about every JWKS fetch and introspection call (the app counts them as metrics). */
  readonly observer?: VerifierObserver;
}

/**
 * A verifier for one tenant. Tokens are remembered only
 * by their SHA-256 and only by this verifier, so one tenant's verification
 * never answers for another's. Throws TypeError at creation for invalid
 * settings (fail at startup, not on the first request).
 */
export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  const logger = options.logger.child({ component: 'auth' });
  const now = options.now ?? Date.now;
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const lifetime = new AbortController();
  const cache = new TokenCache(options.tokenCacheSize ?? DEFAULT_TOKEN_CACHE_SIZE);

  if (!URL.canParse(options.resource)) throw new TypeError('resource must be an absolute URI');
  const issuers = new Map<string, TrustedIssuer>();
  for (const settings of options.issuers) {
    validateIssuerSettings(settings);
    if (issuers.has(settings.issuer))
      throw new TypeError(`issuer ${JSON.stringify(settings.issuer)} is configured twice`);
    issuers.set(settings.issuer, {
      settings,
      audiences: [options.resource, ...settings.audiences],
      keys:
        settings.keys === undefined
          ? undefined
          : new IssuerKeySet({
              issuer: settings.issuer,
              source: settings.keys,
              fetch: settings.egress === undefined ? fetchImpl : egressFetch(settings.egress),
              now,
              logger,
              closed: lifetime.signal,
              observer: options.observer,
            }),
    });
  }
  const introspecting = [...issuers.values()].filter((issuer) => issuer.settings.introspection !== undefined);
  if (introspecting.length > 1) {
    // An opaque token names no issuer: trying several endpoints would hand one
    // identity provider's tokens to another.
    throw new TypeError('at most one issuer per tenant may configure introspection');
  }
  const lenient = introspecting[0]?.settings.introspection;
  if (lenient?.dangerouslyAcceptMissingAudience === true) {
    // Said at every load, so the weakened audience binding is never silent.
    logger.warn(
      { issuer: introspecting[0]!.settings.issuer, clientIds: lenient.clientIds },
      'introspection accepts tokens without an audience (dangerouslyAcceptMissingAudience): ' +
        'any token of these clients from this issuer is honoured, whatever API or tenant it was minted for',
    );
  }

  const ctx: VerificationContext = {
    issuers,
    introspecting: introspecting[0],
    fetch: fetchImpl,
    now,
    logger,
    closed: lifetime.signal,
    observer: options.observer,
  };

  return {
    async verify(token, signal) {
      const hash = tokenHash(token);
      const cached = cache.get(hash, now());
      if (cached !== undefined) return cached;
      let verified: Verified;
      try {
        verified = await verifyUncached(token, ctx, signal);
      } catch (error) {
        if (error instanceof AuthError) {
          // A refusal with a hint usually means the configuration and the identity provider
          // disagree: the operator's level, with what was received and what would accept it.
          if (error.operatorHint === undefined) {
            logger.debug({ code: error.code, reason: error.message }, 'access token refused');
          } else {
            const { received, setting } = error.operatorHint;
            logger.info({ code: error.code, reason: error.message, received, setting }, 'access token refused');
          }
        }
        throw error;
      }
      cache.set(hash, verified.principal, verified.cacheUntil, now());
      return verified.principal;
    },
    close() {
      lifetime.abort();
      cache.clear();
    },
  };
}

function verifyUncached(token: string, ctx: VerificationContext, signal: AbortSignal | undefined): Promise<Verified> {
  if (token === '') return Promise.reject(new AuthError('invalid_token', 'The token is empty'));
  if (isCompactJws(token)) return verifyJwt(token, ctx, signal);
  // Not a JWS: an opaque token (RFC 7662), if this tenant introspects.
  if (ctx.introspecting === undefined) {
    return Promise.reject(new AuthError('invalid_token', 'The token is not a JWT this resource can verify'));
  }
  return verifyByIntrospection(token, ctx.introspecting, ctx, signal);
}

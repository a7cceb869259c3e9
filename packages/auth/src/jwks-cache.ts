import type { Logger } from '@mcpgw/core';
import { createLocalJWKSet, errors, type FlattenedJWSInput, type JSONWebKeySet, type JWSHeaderParameters } from 'jose';
import { fetchJson, UpstreamError } from './bounded-fetch.js';
import type { VerifierObserver } from './verifier-observer.js';
import { discoverJwksUri } from './discovery.js';
import type { IssuerKeysSource } from './issuer-settings.js';

/** An unknown `kid` refetches the JWKS at most this often per issuer. */
export const REFETCH_COOLDOWN_MS = 30_000;
/** Known keys are refreshed in the background once they are this old. */
export const REFRESH_INTERVAL_MS = 10 * 60_000;
const MAX_JWKS_BYTES = 512 * 1024;

type LocalKeySet = ReturnType<typeof createLocalJWKSet>;
type VerificationKey = Awaited<ReturnType<LocalKeySet>>;

/** The issuer's keys were never loaded (endpoint down since start). */
export class KeysUnavailableError extends Error {
  constructor() {
    super('signing keys unavailable');
    this.name = 'KeysUnavailableError';
  }
}

export interface IssuerKeySetOptions {
  readonly issuer: string;
  readonly source: IssuerKeysSource;
  readonly fetch: typeof fetch;
  readonly now: () => number;
  readonly logger: Logger;
  /** Aborted by the verifier's close(): in-flight fetches stop, none start. */
  readonly closed: AbortSignal;
  readonly observer?: VerifierObserver | undefined;
}

/**
 * One issuer's verification keys. Written here rather than taken from jose's
 * createRemoteJWKSet, which refetches on every unknown `kid` after a failure
 * (no cooldown) and stops verifying with known keys once its cache is older
 * than `cacheMaxAge` and the refetch fails (10 minutes by default). Here:
 * - a token whose key is known never waits on the network; keys older than
 *   {@link REFRESH_INTERVAL_MS} are refreshed in the background;
 * - a failed refresh keeps the known keys (stale-if-error);
 * - an unknown `kid` refetches at most once per {@link REFETCH_COOLDOWN_MS},
 *   so a flood of made-up kids cannot hammer the identity provider;
 * - concurrent refetches share one request.
 * Key selection (kid, kty, alg, use, key_ops) is jose's createLocalJWKSet.
 */
export class IssuerKeySet {
  readonly #options: IssuerKeySetOptions;
  readonly #pinned: boolean;
  #keys: LocalKeySet | undefined;
  #jwksUri: string | undefined;
  #loadedAt = Number.NEGATIVE_INFINITY;
  #attemptedAt = Number.NEGATIVE_INFINITY;
  #refresh: Promise<void> | undefined;

  constructor(options: IssuerKeySetOptions) {
    this.#options = options;
    const source = options.source;
    this.#pinned = 'jwks' in source;
    if ('jwks' in source) this.#keys = createLocalJWKSet({ keys: [...source.jwks.keys] });
    if ('jwksUri' in source) this.#jwksUri = source.jwksUri;
  }

  /**
   * The key for a token's protected header (a jose `JWTVerifyGetKey`). Throws
   * jose's JWKSNoMatchingKey when no key fits even after the refetch it was
   * allowed, and {@link KeysUnavailableError} when no keys were ever loaded.
   * `signal` only stops this caller waiting; a shared refetch carries on.
   */
  async getKey(header: JWSHeaderParameters, token: FlattenedJWSInput, signal?: AbortSignal): Promise<VerificationKey> {
    const known = this.#keys;
    if (known !== undefined) {
      try {
        const key = await known(header, token);
        this.#refreshInBackgroundIfDue();
        return key;
      } catch (error) {
        if (this.#pinned || !(error instanceof errors.JWKSNoMatchingKey)) throw error;
      }
    }
    await this.#refetchForUnknownKey(signal);
    const refreshed = this.#keys;
    if (refreshed === undefined) throw new KeysUnavailableError();
    return refreshed(header, token);
  }

  async #refetchForUnknownKey(signal: AbortSignal | undefined): Promise<void> {
    if (this.#refresh === undefined) {
      if (this.#options.now() - this.#attemptedAt < REFETCH_COOLDOWN_MS) return;
      this.#startRefresh('unknown key');
    }
    await waitUnlessAborted(this.#refresh!, signal);
  }

  #refreshInBackgroundIfDue(): void {
    const now = this.#options.now();
    if (this.#pinned || this.#refresh !== undefined) return;
    if (now - this.#loadedAt < REFRESH_INTERVAL_MS || now - this.#attemptedAt < REFETCH_COOLDOWN_MS) return;
    this.#startRefresh('periodic');
  }

  #startRefresh(why: string): void {
    this.#attemptedAt = this.#options.now();
    this.#refresh = this.#load(why).finally(() => {
      this.#refresh = undefined;
    });
  }

  /** Never rejects: a failure is logged and the known keys stay. */
  async #load(why: string): Promise<void> {
    const { issuer, logger, closed } = this.#options;
    try {
      if (closed.aborted) throw new UpstreamError('verifier closed');
      const http = { fetch: this.#options.fetch, signal: closed };
      this.#jwksUri ??= await discoverJwksUri(issuer, http);
      const { status, body } = await fetchJson(this.#jwksUri, { method: 'GET' }, { ...http, maxBytes: MAX_JWKS_BYTES });
      if (status !== 200) throw new UpstreamError(`JWKS endpoint answered HTTP ${status}`);
      const keys = createLocalJWKSet(body as JSONWebKeySet);
      this.#keys = keys;
      this.#loadedAt = this.#options.now();
      this.#options.observer?.jwksFetched?.('ok');
      logger.debug({ issuer, why, keys: (body as JSONWebKeySet).keys.length }, 'JWKS loaded');
    } catch (error) {
      if (!closed.aborted) this.#options.observer?.jwksFetched?.('error');
      logger.warn(
        {
          issuer,
          why,
          reason: error instanceof Error ? error.message : 'unknown',
          keptKnownKeys: this.#keys !== undefined,
        },
        'JWKS refresh failed',
      );
    }
  }
}

function waitUnlessAborted(promise: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

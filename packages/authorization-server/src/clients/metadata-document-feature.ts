import type { Logger } from '@mcpgw/core';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
import { errors } from '../oidc-provider-module.js';
import { MetadataDocumentFetchError, type FetchedDocument } from './metadata-document-fetch.js';

type FeatureSettings = NonNullable<NonNullable<Configuration['features']>['clientIdMetadataDocument']>;

/**
 * How long oidc-provider keeps a fetched document (seconds), whatever its
 * `Cache-Control` or `Expires` says (draft-ietf-oauth-client-id-metadata-document-02
 * section 5.2 lets the server bound them). At least five minutes: a client
 * that sends `max-age=0` must not make every authorization request a fetch.
 * At most a day: a client that changes its document is seen within a day.
 */
export const METADATA_DOCUMENT_CACHE_SECONDS = { min: 300, max: 86_400 } as const;

/**
 * A prefetched document is handed to oidc-provider's fetch right after the
 * hook that fetched it returns; one not taken by then (another request for
 * the same client got the cached one first) is dropped after this long.
 */
const PREFETCH_TTL_MS = 10_000;
const PREFETCH_MAX_ENTRIES = 100;

export interface MetadataDocumentFeatureOptions {
  /** The trust policy: why a client is refused, or undefined (metadata-document-trust.ts). */
  trust: (clientId: string) => string | undefined;
  fetchDocument: (url: string) => Promise<FetchedDocument>;
  logger: Logger;
  now: () => number;
}

/**
 * `features.clientIdMetadataDocument` and the `fetch` hook that goes with it.
 *
 * oidc-provider wraps every failure of its own fetch in one description
 * ("client_id metadata document fetch failed"), so the client would not
 * learn why. So `allowFetch` fetches the document itself, through the
 * limits, and a refusal becomes an `invalid_client` whose description says
 * why (too large, too slow, redirected, an internal address); the document
 * it fetched is what the `fetch` hook then hands oidc-provider, which
 * validates and caches it as usual. A failure is remembered for the rest of
 * the request: oidc-provider looks the client up once more to render the
 * error, and that must not fetch again.
 */
export function metadataDocumentFeature(options: MetadataDocumentFeatureOptions): {
  feature: FeatureSettings;
  fetch: NonNullable<Configuration['fetch']>;
} {
  const { trust, fetchDocument, logger, now } = options;
  const prefetched = new Map<string, { document: FetchedDocument; at: number }>();
  const failures = new WeakMap<object, Map<string, Error>>();

  const refuse = (ctx: KoaContextWithOIDC | undefined, clientId: string, description: string, cause?: unknown) => {
    logger.debug(
      { clientId, reason: description, ...(cause === undefined ? {} : { cause: String(cause) }) },
      'client metadata document refused',
    );
    const error = new errors.InvalidClient(description);
    if (ctx !== undefined) {
      const seen = failures.get(ctx) ?? new Map<string, Error>();
      seen.set(clientId, error);
      failures.set(ctx, seen);
    }
    return error;
  };

  const remember = (clientId: string, document: FetchedDocument) => {
    const at = now();
    for (const [url, entry] of prefetched) {
      if (at - entry.at > PREFETCH_TTL_MS || prefetched.size >= PREFETCH_MAX_ENTRIES) prefetched.delete(url);
    }
    prefetched.set(clientId, { document, at });
  };

  const feature: FeatureSettings = {
    enabled: true,
    ack: 'draft-02',
    cacheDuration: { ...METADATA_DOCUMENT_CACHE_SECONDS },
    async allowFetch(ctx, clientId) {
      const earlier = ctx === undefined ? undefined : failures.get(ctx)?.get(clientId);
      if (earlier !== undefined) throw earlier;
      const untrusted = trust(clientId);
      if (untrusted !== undefined) throw refuse(ctx, clientId, untrusted);
      try {
        remember(clientId, await fetchDocument(clientId));
      } catch (error) {
        const description =
          error instanceof MetadataDocumentFetchError
            ? error.description
            : 'client metadata document could not be fetched';
        throw refuse(ctx, clientId, description, error instanceof Error ? (error.cause ?? error) : error);
      }
      return true;
    },
    // Also runs for a document served from oidc-provider's cache.
    allowClient(ctx, client) {
      const untrusted = trust(client.clientId);
      if (untrusted !== undefined) throw refuse(ctx, client.clientId, untrusted);
      return true;
    },
  };

  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
    if (method !== 'GET') throw new TypeError(`this authorization server fetches with GET only, not ${method}`);
    const entry = prefetched.get(url);
    prefetched.delete(url);
    // Anything else oidc-provider fetches (none of this configuration's clients
    // has a jwks_uri or a sector_identifier_uri) goes through the same limits.
    const document =
      entry !== undefined && now() - entry.at <= PREFETCH_TTL_MS ? entry.document : await fetchDocument(url);
    return new Response(new Uint8Array(document.body), { status: 200, headers: document.headers });
  };

  return { feature, fetch };
}

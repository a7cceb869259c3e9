import { createHash } from 'node:crypto';
import { isStreamedBlob, RecencyMap } from '@mcpgw/core';
import type {
  AccessScope,
  Source,
  ResourceContents,
  ResourceDescriptor,
  ResourceTemplateDescriptor,
} from '@mcpgw/core';
import type { CursorListing, ReadOutcome, ResourceService } from '@mcpgw/protocol';
import { EncodedJson } from '@mcpgw/protocol';
import type { GatewayCache } from './gateway-cache.js';
import type { ResultBody } from './shared-results.js';

export interface CallerCacheContext {
  tenantId: string;
  /** The configuration revision of the runtime serving the caller: keys every entry (see EntryKeyParts.revision). */
  revision?: number;
  /** The principal fingerprint from the policy layer: who may reuse an entry. */
  fingerprint: string;
  /** The caller's view (`AccessScope.view`): callers with equal views share stored bodies. */
  view?: string | undefined;
  cache: GatewayCache;
  /**
   * Kinds of result that can never have a `ttlMs` above 0 (every source of
   * the tenant has 0 for them): not even looked up, saving a round trip.
   */
  neverCached?: { lists: boolean; reads: boolean };
}

/**
 * The per-credential result cache: finished `resources/list`
 * pages, `resources/templates/list` pages and `resources/read` results,
 * keyed by (tenant, principal fingerprint, method, cursor or uri) and kept
 * for exactly the `ttlMs` the result carries; `ttlMs: 0` is never stored.
 * "Caches MUST NOT be shared across authorization contexts" (2026-07-28
 * server/utilities/caching, Cache Scope): the fingerprint changes with the
 * caller's effective access, so two callers share an entry only when the
 * policy gives them identical access as the same principal.
 *
 * A result is kept as the JSON text it is sent as (a hit neither
 * parses nor serializes it: the protocol layer splices the text into the
 * response), and identical texts are stored once for all callers with the
 * same view (see `createSharedResults`). A first page's cursor is kept as
 * its position and sealed for each caller on the way out; a page after a
 * cursor is never shared, since only the catalog may judge whose cursor it is.
 *
 * A hit reports the freshness left, not the original `ttlMs`, so a client
 * caching it in turn does not extend its life. Requests carrying
 * `inputResponses` or `requestState` arrive with `cacheable: false` and
 * bypass the cache both ways (Cache Key: they "MUST NOT be cached").
 * "Not found" and errors are never stored.
 */
export function createCachingResourceService(inner: ResourceService, context: CallerCacheContext): ResourceService {
  const { tenantId, fingerprint, cache } = context;
  const revision = context.revision ?? 0;
  const lists = !(context.neverCached?.lists ?? false);
  const reads = !(context.neverCached?.reads ?? false);
  // A page's cursor can be sealed again for another caller only when the inner service can do it.
  const listView = inner.encodeCursor === undefined ? undefined : context.view;
  /** The caller's cursor from what the cache kept (see `encodeList`). */
  const cursorFor = (listing: CursorListing, body: ResultBody): string | undefined => {
    const kept = body.state as KeptCursor | undefined;
    if (kept === undefined) return undefined;
    if ('cursor' in kept) return kept.cursor;
    // Sealed for this caller (the catalog's codec hands out the same cursor again for a while).
    return inner.encodeCursor!(listing, kept.position);
  };

  /**
   * One list page through the cache. The call that fetched it returns its own
   * page; a call that joined another's flight, or a hit, rebuilds it from the
   * kept body with `fromBody`, with the cursor sealed for this caller.
   */
  async function cachedList<P extends { nextCursor?: string; nextState?: unknown; ttlMs: number }>(
    listing: CursorListing,
    cursor: string | undefined,
    signal: AbortSignal,
    options: Parameters<ResourceService['listResources']>[2],
    fetchPage: (signal: AbortSignal) => Promise<P>,
    entries: (page: P) => readonly unknown[],
    fromBody: (body: ResultBody, rest: { nextCursor?: string; ttlMs: number }) => P,
  ): Promise<P> {
    let page: P | undefined;
    const { body, ttlMs } = await cache.getOrFetchResult({
      tenantId,
      revision,
      who: fingerprint,
      // A cursor is bound to its caller: only the catalog may judge it, so a page after one is never shared.
      view: cursor === undefined ? listView : undefined,
      method: listing === 'resources' ? 'resources/list' : 'resources/templates/list',
      params: cursor ?? null,
      cacheable: lists && (options?.cacheable ?? true),
      signal,
      fetch: async (shared) => {
        page = await fetchPage(shared ?? signal);
        return encodeList(entries(page), page, listView);
      },
    });
    // Fetched by this very call: its own page. A call that joined another's flight builds it from the body.
    if (ttlMs === undefined && page !== undefined) return page;
    return fromBody(body!, { ...optional('nextCursor', cursorFor(listing, body!)), ttlMs: ttlMs ?? body!.ttlMs });
  }

  return {
    listResources(cursor, signal, options) {
      return cachedList(
        'resources',
        cursor,
        signal,
        options,
        (shared) => inner.listResources(cursor, shared, options),
        (page) => page.resources,
        (body, rest) => ({
          get resources(): ResourceDescriptor[] {
            return JSON.parse(body.text) as ResourceDescriptor[];
          },
          encodedResources: new EncodedJson(body.text, body.bytes),
          ...rest,
        }),
      );
    },

    listTemplates(cursor, signal, options) {
      return cachedList(
        'templates',
        cursor,
        signal,
        options,
        (shared) => inner.listTemplates(cursor, shared, options),
        (page) => page.resourceTemplates,
        (body, rest) => ({
          get resourceTemplates(): ResourceTemplateDescriptor[] {
            return JSON.parse(body.text) as ResourceTemplateDescriptor[];
          },
          encodedResourceTemplates: new EncodedJson(body.text, body.bytes),
          ...rest,
        }),
      );
    },

    async read(uri, signal, options) {
      let outcome: ReadOutcome | undefined;
      const { body, ttlMs } = await cache.getOrFetchResult({
        tenantId,
        revision,
        who: fingerprint,
        // No cursor in a read: the caller's view alone decides what it sees.
        view: context.view,
        method: 'resources/read',
        params: uri,
        cacheable: reads && (options?.cacheable ?? true),
        signal,
        fetch: async (shared) => {
          outcome = await inner.read(uri, shared ?? signal, options);
          // Absent resources are not stored: the next read asks the source again.
          if (outcome === undefined) return undefined;
          // Bytes still arriving are written once, to this caller: neither stored nor handed to a joined call.
          if (outcome.contents.some(isStreamedBlob)) return STREAMED;
          return Object.assign(lazyText(outcome.contents), { ttlMs: outcome.ttlMs });
        },
      });
      if (body === undefined) return undefined;
      // Joined another call's flight whose answer was streamed to that call: this one reads for itself.
      if (body === STREAMED && outcome === undefined) return inner.read(uri, signal, options);
      // Fetched by this very call: its own answer. A call that joined another's flight builds it from the body.
      if (ttlMs === undefined && outcome !== undefined) return outcome;
      const text = body.text;
      return {
        get contents(): ResourceContents[] {
          return JSON.parse(text) as ResourceContents[];
        },
        encodedContents: new EncodedJson(text, body.bytes),
        ttlMs: ttlMs ?? body.ttlMs,
      };
    },
  };
}

/**
 * The body of a read whose contents hold a streamed blob: `ttlMs` 0, so it is
 * never stored, and no text (a streamed blob has none).
 */
const STREAMED: ResultBody = Object.freeze({
  get text(): string {
    throw new Error('a streamed read has no stored form');
  },
  ttlMs: 0,
});

/** What a kept page says of its cursor: the position to seal again, or the cursor itself. */
type KeptCursor = { position: unknown } | { cursor: string };

/**
 * A listing page as the cache keeps it: its entries as JSON text and the
 * caller-independent position its cursor seals. A page whose cursor cannot be
 * sealed again (the inner service keeps no position) keeps the cursor itself,
 * and is then kept for its own caller only.
 */
function encodeList(
  entries: readonly unknown[],
  page: { nextCursor?: string; nextState?: unknown; ttlMs: number },
  view: string | undefined,
): ResultBody {
  const kept: Pick<ResultBody, 'state' | 'private'> =
    page.nextCursor === undefined
      ? {}
      : view !== undefined && page.nextState !== undefined
        ? { state: { position: page.nextState } satisfies KeptCursor }
        : { state: { cursor: page.nextCursor } satisfies KeptCursor, private: true };
  // Object.assign keeps the getter (a spread would call it).
  return Object.assign(lazyText(entries), { ttlMs: page.ttlMs }, kept);
}

/**
 * `text` serialized on first use only: a result that is not stored (ttl 0, bypass) is never serialized here.
 */
function lazyText(value: unknown): { readonly text: string } {
  let text: string | undefined;
  return {
    get text() {
      text ??= JSON.stringify(value);
      return text;
    },
  };
}

function optional<K extends string, V>(name: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [name]: value }) as { [P in K]?: V };
}

/** Anything with the catalog's shape: a tenant id, its sources and a per-scope view. */
export interface ScopedCatalog {
  readonly tenantId: string;
  readonly sources: ReadonlyArray<Pick<Source, 'ttlMs' | 'backendIdentity'>>;
  forScope(scope: AccessScope): ResourceService;
}

/**
 * The fingerprint and view a caller's results are cached under. When a
 * source answers under each caller's backend identity, results depend on
 * those identities as well as on the grants: both names then hash the
 * identities in, so two callers share an entry (own or view) only when
 * every such source gives them the same identity. The fingerprint alone
 * would not do: it holds the subject and the grants, not the groups or
 * scopes a role mapping may read.
 */
export function cacheIdentityOf(
  scope: AccessScope,
  sources: ScopedCatalog['sources'],
): { fingerprint: string; view: string | undefined } {
  const identities = sources.flatMap((source) =>
    source.backendIdentity === undefined ? [] : [source.backendIdentity(scope.caller).key],
  );
  if (identities.length === 0) return { fingerprint: scope.fingerprint, view: scope.view };
  const under = (name: string) =>
    createHash('sha256')
      .update(JSON.stringify([name, identities]))
      .digest('base64url');
  return { fingerprint: under(scope.fingerprint), view: scope.view === undefined ? undefined : under(scope.view) };
}

/** Callers per tenant whose views are kept for reuse (the most recently used). */
const MAX_REUSED_VIEWS = 256;

/**
 * The same catalog, whose per-scope views go through the per-credential
 * result cache, under the configuration revision the catalog was built from.
 */
export function withResultCache<C extends ScopedCatalog>(catalog: C, cache: GatewayCache, revision = 0): C {
  const neverCached = {
    lists: catalog.sources.every((source) => source.ttlMs.list <= 0),
    reads: catalog.sources.every((source) => source.ttlMs.read <= 0),
  };
  // A caller's view holds nothing of any one request, so it is reused across their requests, keyed by their
  // scope (one object for as long as their verified token is remembered). Bounded: a view costs a dozen
  // closures, and thousands of callers who list once must not keep thousands of them.
  const views = new RecencyMap<AccessScope, ResourceService>();
  return {
    ...catalog,
    forScope: (scope: AccessScope) => {
      let view = views.get(scope);
      if (view === undefined) {
        view = createCachingResourceService(catalog.forScope(scope), {
          tenantId: catalog.tenantId,
          revision,
          ...cacheIdentityOf(scope, catalog.sources),
          cache,
          neverCached,
        });
        views.set(scope, view);
        while (views.size > MAX_REUSED_VIEWS) views.evict();
      }
      return view;
    },
  };
}

import type { AccessScope, ListingRange, Logger, ResourceDescriptor, Source } from '@mcpgw/core';
import { GatewayError, isGatewayError, silentLogger } from '@mcpgw/core';
import type { CursorCodec, ReadOutcome, ResourcePage, ResourceService, TemplatePage } from '@mcpgw/protocol';
import { parseResourceCursor, parseTemplateCursor } from './cursor-state.js';
import type { ResourceCursorState } from './cursor-state.js';

export interface CatalogOptions {
  tenantId: string;
  /** In configuration order: the order of the merged listing. */
  sources: readonly Source[];
  cursors: CursorCodec;
  /** Descriptors per `resources/list` page. Default 100. */
  pageSize?: number;
  /**
   * Source calls one page may make before it returns what it has (with a
   * cursor), so a caller who can see little of a large source cannot make
   * one request walk the whole backend. Default 10. Sources are asked only
   * for the ranges the caller's patterns reach, once per page, so
   * only patterns without a literal start (a full scan) still make a page
   * use several calls of one source.
   */
  maxSourceCallsPerPage?: number;
  /** Where degraded listings are reported. */
  logger?: Logger;
}

/** A tenant's merged resource catalog; `forScope` gives one caller's view of it. */
export interface Catalog {
  readonly tenantId: string;
  readonly sources: readonly Source[];
  forScope(scope: AccessScope): ResourceService;
}

export function createCatalog(options: CatalogOptions): Catalog {
  const { tenantId, sources, cursors } = options;
  const pageSize = options.pageSize ?? 100;
  const maxSourceCalls = options.maxSourceCallsPerPage ?? 10;
  const logger = options.logger ?? silentLogger;
  /**
   * A backend that is down must not take the tenant's other sources
   * with it. A listing skips an unavailable source, says so in the log and
   * names it to the client (`unavailableSources`, which the protocol layer
   * puts in `_meta`); the page then gets ttlMs 0 so no client or cache keeps
   * the partial view, nor the notice, beyond this one answer. Only sources the
   * caller may see are ever called, so only their ids can be named.
   */
  const skipUnavailable = (source: Source, error: unknown, skipped: string[]): void => {
    if (!isGatewayError(error) || error.code !== 'MCPGW_SOURCE_UNAVAILABLE') throw error;
    logger.warn({ source: source.id, err: error }, 'source unavailable: listing continues without it');
    skipped.push(source.id);
  };
  const ids = new Set<string>();
  for (const source of sources) {
    if (ids.has(source.id)) throw new Error(`Tenant '${tenantId}' has two sources with id '${source.id}'`);
    ids.add(source.id);
  }
  const fallbackListTtlMs = Math.min(...sources.map((s) => s.ttlMs.list), 60_000);

  return {
    tenantId,
    sources,
    forScope(scope) {
      const binding = (listing: string) => ({ tenantId, fingerprint: scope.fingerprint, listing });
      const visible = (source: Source, uri: string) => scope.allowsSource(source.id) && scope.allows(source.id, uri);
      /** Who asks, for sources that answer under the caller's backend identity (Source.backendIdentity). */
      const caller = scope.caller === undefined ? {} : { caller: scope.caller };
      /** A narrowed page request's shape and, when it has a name for caches, the caller's view. */
      const narrowing = (source: Source, ranges: readonly ListingRange[] | undefined) => {
        if (ranges === undefined) return {};
        if (scope.view === undefined) return { ranges };
        return { ranges, visible: (uri: string) => scope.allows(source.id, uri), view: scope.view };
      };

      return {
        async listResources(cursor, signal): Promise<ResourcePage> {
          let state: ResourceCursorState = { source: 0, sourceId: sources[0]?.id ?? '' };
          if (cursor !== undefined) {
            state = parseResourceCursor(cursors.decode(binding('resources'), cursor));
            if (sources[state.source]?.id !== state.sourceId) throw staleCursor();
          }
          const resources: ResourceDescriptor[] = [];
          let ttlMs = Number.POSITIVE_INFINITY;
          let calls = 0;
          /** The index of the narrowed source this page has called, if any. */
          let narrowedCallOf: number | undefined;
          const unavailable: string[] = [];
          const incomplete: string[] = [];
          let index = state.source;
          let position = state.position;
          while (index < sources.length && resources.length < pageSize && calls < maxSourceCalls) {
            const source = sources[index]!;
            // The caller's grants narrow what the source is asked
            // for; a source none of whose URIs can be visible costs no call.
            const prefixes = scope.allowsSource(source.id) ? scope.listingPrefixes?.(source.id) : [];
            if (prefixes?.length === 0) {
              index += 1;
              position = undefined;
              continue;
            }
            // A narrowed source is asked once per page: its one call makes at
            // most one backend call per range, so a page costs at most one
            // backend call per granted prefix whatever the patterns' shape
            // (a short page, with a cursor, rather than a second pass).
            if (prefixes !== undefined && narrowedCallOf === index) break;
            if (prefixes !== undefined) narrowedCallOf = index;
            calls += 1;
            ttlMs = Math.min(ttlMs, source.ttlMs.list);
            let page;
            try {
              const limit = pageSize - resources.length;
              const ranges = prefixes === undefined ? undefined : scope.listingRanges?.(source.id);
              page = await source.listResources(
                {
                  ...(prefixes === undefined
                    ? { position, limit }
                    : { position, limit, prefixes, ...narrowing(source, ranges) }),
                  ...caller,
                },
                signal,
              );
            } catch (error) {
              skipUnavailable(source, error, unavailable);
              index += 1;
              position = undefined;
              continue;
            }
            if (page.ttlMs !== undefined) ttlMs = Math.min(ttlMs, page.ttlMs);
            if (page.incomplete === true && !incomplete.includes(source.id)) incomplete.push(source.id);
            for (const item of page.items) {
              if (scope.allows(source.id, item.uri)) resources.push(item);
            }
            if (page.nextPosition === undefined) {
              index += 1;
              position = undefined;
            } else {
              position = page.nextPosition;
            }
          }
          const next: ResourceCursorState | undefined =
            index < sources.length ? { source: index, sourceId: sources[index]!.id, position } : undefined;
          return {
            resources,
            nextCursor: next === undefined ? undefined : cursors.encode(binding('resources'), next),
            ...(next === undefined ? {} : { nextState: next }),
            ttlMs: unavailable.length > 0 ? 0 : Number.isFinite(ttlMs) ? ttlMs : fallbackListTtlMs,
            ...(unavailable.length > 0 ? { unavailableSources: unavailable } : {}),
            ...(incomplete.length > 0 ? { incompleteSources: incomplete } : {}),
          };
        },

        async listTemplates(cursor, signal): Promise<TemplatePage> {
          const offset = cursor === undefined ? 0 : parseTemplateCursor(cursors.decode(binding('templates'), cursor));
          const shown = sources.filter((s) => scope.allowsSource(s.id));
          const settled = await Promise.allSettled(shown.map((s) => s.listTemplates(signal)));
          const unavailable: string[] = [];
          const all = settled.flatMap((outcome, i) => {
            if (outcome.status === 'fulfilled') return outcome.value;
            skipUnavailable(shown[i]!, outcome.reason, unavailable);
            return [];
          });
          if (offset > all.length) throw staleCursor();
          const end = offset + pageSize;
          return {
            resourceTemplates: all.slice(offset, end),
            nextCursor: end < all.length ? cursors.encode(binding('templates'), end) : undefined,
            ...(end < all.length ? { nextState: end } : {}),
            ttlMs: unavailable.length > 0 ? 0 : Math.min(fallbackListTtlMs, ...shown.map((s) => s.ttlMs.list)),
            ...(unavailable.length > 0 ? { unavailableSources: unavailable } : {}),
          };
        },

        async read(uri, signal): Promise<ReadOutcome | undefined> {
          // A URI routes to the first source (in configuration order) that owns it;
          // configuration keeps URI spaces disjoint, so that is the only one.
          const owner = sources.find((s) => s.owns(uri));
          // Invisible and missing look the same: no existence oracle.
          if (owner === undefined || !visible(owner, uri)) return undefined;
          // The source gets the caller's view too, so a folder read neither
          // fetches nor counts children the caller may not see.
          const contents = await owner.read(uri, signal, (entry) => scope.allows(owner.id, entry), scope.caller);
          if (contents === undefined) return undefined;
          // A folder read returns its children: each must be visible on its own
          // (kept as a second line of defence for sources that ignore `visible`).
          return { contents: contents.filter((entry) => scope.allows(owner.id, entry.uri)), ttlMs: owner.ttlMs.read };
        },

        // The same sealing as above, for a page another caller of the same view listed.
        encodeCursor: (listing, state) => cursors.encode(binding(listing), state),
      };
    },
  };
}

/** A cursor minted before the tenant's sources changed: the same failure as any other cursor's. */
function staleCursor() {
  return new GatewayError('MCPGW_CURSOR_INVALID');
}

import type { Logger, Source, SourceCaller } from '@mcpgw/core';
import { errorSummary, silentLogger } from '@mcpgw/core';

/**
 * What one backend identity lists of a source (`Source.backendIdentity`):
 * the URIs its latest listing gave and the listing before that, so a change
 * is decided against both sides of it (a table that went was only in the
 * earlier one).
 */
export interface BackendView {
  /** Whether the identity listed `uri` at the latest look or at the one before it. */
  shows(uri: string): boolean;
}

export interface BackendViews {
  /**
   * Keeps `caller`'s identity's view of `source` while listen streams need
   * it: the first holder lists the source under that identity (so a later
   * change has a before to compare with), the last release forgets it.
   * Returns the release (safe to call twice).
   */
  hold(tenantId: string, source: Source, caller: SourceCaller | undefined): () => void;
  /**
   * The identity's view for `event` (any object naming one delivery of one
   * event: every stream of that identity asking about the same event gets the
   * same answer, from one listing). `relist` lists again first (resources
   * came or went); otherwise the view held is answered. Undefined when the
   * identity is not held or its listing failed: the caller is then told
   * nothing of this source, since nothing is known of what they see (fail closed).
   */
  look(
    tenantId: string,
    source: Source,
    caller: SourceCaller | undefined,
    event: object,
    relist: boolean,
  ): Promise<BackendView | undefined>;
}

export interface BackendViewsOptions {
  readonly logger?: Logger;
  /**
   * The most URIs a view keeps; past it the listing stops and what it did not
   * reach counts as not shown (fail closed), logged once per identity.
   * Default 50,000.
   */
  readonly maxUris?: number;
  /** Descriptors asked for per listing page. Default 1,000. */
  readonly pageSize?: number;
}

/** One identity's listing: unknown (`undefined`) until it first succeeds. */
type Listed = ReadonlySet<string> | undefined;

interface Entry {
  holders: number;
  /** The latest listing, or the one in flight (which falls back to the one before when it fails). */
  current: Promise<Listed>;
  /** The listing `current` replaced. */
  previous: Listed;
  lastEvent: object | undefined;
  lastLook: Promise<BackendView | undefined> | undefined;
  warnedFull: boolean;
}

/**
 * The listings listen streams decide a source's changes against for a source
 * that answers each caller under a backend identity of their own (a database
 * role, an STS role with session tags): a caller is told of a resource only
 * if their identity lists it, as their own `resources/list` would. One view
 * per (tenant, source, identity) on this replica, shared by every stream of
 * that identity, and one listing per event for all of them. The listing is
 * the source's own (through its catalog cache, keyed by the identity), under
 * no narrowing: grants are applied per caller on top of it, so callers whose
 * grants differ still share it.
 */
export function createBackendViews(options: BackendViewsOptions = {}): BackendViews {
  const logger = options.logger ?? silentLogger;
  const maxUris = options.maxUris ?? 50_000;
  const pageSize = options.pageSize ?? 1_000;
  const entries = new Map<string, Entry>();
  const keyOf = (tenantId: string, source: Source, caller: SourceCaller | undefined) =>
    JSON.stringify([tenantId, source.id, source.backendIdentity?.(caller).key ?? null]);

  const list = async (tenantId: string, source: Source, caller: SourceCaller | undefined, entry: Entry) => {
    const uris = new Set<string>();
    let position: string | undefined;
    try {
      do {
        const page = await source.listResources({
          limit: pageSize,
          ...(position === undefined ? {} : { position }),
          ...(caller === undefined ? {} : { caller }),
        });
        for (const item of page.items) uris.add(item.uri);
        position = page.nextPosition;
        if (uris.size >= maxUris && position !== undefined) {
          if (!entry.warnedFull) {
            entry.warnedFull = true;
            logger.warn(
              { tenant: tenantId, sourceId: source.id, maxUris },
              'listen streams see only the first URIs of a source under a backend identity; changes past them are not announced',
            );
          }
          break;
        }
      } while (position !== undefined);
      return uris;
    } catch (error) {
      logger.warn(
        { tenant: tenantId, sourceId: source.id, err: errorSummary(error) },
        'listing a source under a listener’s backend identity failed; their stream is told nothing of this change',
      );
      return undefined;
    }
  };

  const viewOf = (before: Listed, after: Listed): BackendView | undefined =>
    after === undefined ? undefined : { shows: (uri) => after.has(uri) || before?.has(uri) === true };

  return {
    hold(tenantId, source, caller) {
      const key = keyOf(tenantId, source, caller);
      let entry = entries.get(key);
      if (entry === undefined) {
        const created: Entry = {
          holders: 0,
          current: Promise.resolve(undefined),
          previous: undefined,
          lastEvent: undefined,
          lastLook: undefined,
          warnedFull: false,
        };
        created.current = list(tenantId, source, caller, created);
        entries.set(key, (entry = created));
      }
      entry.holders += 1;
      const held = entry;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        held.holders -= 1;
        if (held.holders === 0 && entries.get(key) === held) entries.delete(key);
      };
    },

    look(tenantId, source, caller, event, relist) {
      const entry = entries.get(keyOf(tenantId, source, caller));
      if (entry === undefined) return Promise.resolve(undefined);
      if (entry.lastEvent === event && entry.lastLook !== undefined) return entry.lastLook;
      entry.lastEvent = event;
      let look: Promise<BackendView | undefined>;
      if (relist) {
        const before = entry.current;
        // Started now, so the listing sees the change; answered after the one before it settled.
        const after = list(tenantId, source, caller, entry);
        entry.current = Promise.all([before, after]).then(([was, now]) => now ?? was);
        look = Promise.all([before, after]).then(([was, now]) => {
          if (now !== undefined) entry.previous = was;
          return viewOf(was, now);
        });
      } else {
        look = entry.current.then((now) => viewOf(entry.previous, now));
      }
      entry.lastLook = look;
      return look;
    },
  };
}

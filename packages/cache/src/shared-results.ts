import type { CacheKeys } from './cache-keys.js';
import type { CacheEvent } from './cache-metrics.js';
import type { CacheStore } from './cache-store.js';
import type { SingleFlight } from './single-flight.js';

/** A finished result as the result cache keeps it. */
export interface ResultBody {
  /** JSON text of what every caller of the view gets alike, e.g. a page's `resources` array. */
  text: string;
  /** Freshness: the result's `ttlMs` when fetched, the time left on a hit. */
  ttlMs: number;
  /** Caller-independent state of what is bound to the caller, e.g. a cursor's position. */
  state?: unknown;
  /** The UTF-8 of `text`, on a hit: encoded once per stored body, so the response is assembled from bytes. */
  bytes?: Uint8Array;
  /** True when the body holds something bound to the caller who fetched it: never shared with their view. */
  private?: boolean;
}

/** How one result lookup goes. */
export interface ResultCall {
  tenantId: string;
  /** The configuration revision of the runtime asking (see EntryKeyParts.revision). Default 0. */
  revision?: number;
  /** The caller's principal fingerprint: keys the caller's own entry. */
  who: string;
  /** The caller's view (`AccessScope.view`): callers with equal views share bodies. Undefined: no sharing. */
  view: string | undefined;
  /** e.g. `resources/list`. */
  method: string;
  /** Whatever else shapes the result: cursor, uri. */
  params: unknown;
  /** False for requests that must never be cached (MRTR retries). */
  cacheable: boolean;
  signal: AbortSignal | undefined;
  /** The result from the backend; undefined (not found) is never stored. */
  fetch(signal: AbortSignal | undefined): Promise<ResultBody | undefined>;
}

export interface ResultLookup {
  body: ResultBody | undefined;
  /** The `ttlMs` left, on a hit; undefined when fetched (the body carries its own). */
  ttlMs: number | undefined;
}

export interface SharedResultsDeps {
  store: CacheStore;
  keys: CacheKeys;
  flights: SingleFlight;
  generation(tenantId: string, revision: number): Promise<string>;
  count(tenantId: string, event: CacheEvent): void;
  failed(tenantId: string, error: unknown): void;
  now(): number;
  maxValueBytes: number;
}

/** Characters and bytes of decoded bodies kept in process (they never change: a body's key names its content). */
const BODY_MEMO_CHARS = 32 * 1024 * 1024;

/** The result cache's lookup, and how to forget a deleted tenant's bodies kept in process. */
export interface SharedResults {
  (call: ResultCall): Promise<ResultLookup>;
  /** Drops every decoded body whose key starts with `prefix` (one tenant's). */
  forget(prefix: string): void;
}

/**
 * The per-credential result cache with bodies stored once, so many
 * principals of one role hold one copy of a result. Three kinds of entry, all under the tenant's tag:
 *
 *   own entry    (tenant, generation, caller fingerprint, method, params) →
 *                {at, ttl, b}: small, one per caller, each with its own ttl
 *   view entry   (tenant, generation, "view:" + view, method, params) →
 *                the same record, written by whichever caller of the view
 *                fetched last
 *   body         HMAC(tenant, content) → the state line and the body text,
 *                stored once however many entries point at it
 *
 * A caller's own entry is always looked up first and always written, so the
 * fingerprint keys every entry a caller is answered from; a caller without
 * one (their first listing) is answered from the view entry of another
 * caller with the same effective grants, and gets an own entry carrying the
 * time left on it. Nothing bound to a caller is stored at all: the caller's
 * cursor is sealed from the stored state on the way out (by the caller of
 * this lookup). "Caches MUST NOT be shared across authorization contexts"
 * (2026-07-28 server/utilities/caching, Cache Scope): a view is exactly the
 * authorization context, since the caller's visible set is a function of the
 * grants that matched and of nothing else.
 *
 * Bodies are content-addressed, so a decoded copy kept in process is never
 * stale: a hit on Redis is one round trip for the own entry.
 */
export function createSharedResults(deps: SharedResultsDeps): SharedResults {
  const { store, keys, flights, now } = deps;
  const decoded = new Map<string, { state: unknown; text: string; bytes: Buffer }>();
  let decodedChars = 0;

  const remember = (key: string, body: { state: unknown; text: string; bytes: Buffer }) => {
    if (decoded.has(key)) return;
    decoded.set(key, body);
    decodedChars += body.text.length + body.bytes.length;
    for (const [oldest, value] of decoded) {
      if (decodedChars <= BODY_MEMO_CHARS) break;
      decoded.delete(oldest);
      decodedChars -= value.text.length + value.bytes.length;
    }
  };

  /** The body a record points at, or undefined (record unreadable, body gone). */
  const resolve = async (
    tenantId: string,
    raw: string | undefined,
  ): Promise<{ body: ResultBody; bodyMac: string; at: number; ttl: number } | undefined> => {
    if (raw === undefined) return undefined;
    let record: { at: number; ttl: number; b: string };
    try {
      record = JSON.parse(raw) as typeof record;
    } catch {
      return undefined;
    }
    const ttlMs = Math.max(0, record.at + record.ttl - now());
    const key = keys.body(tenantId, record.b);
    let body = decoded.get(key);
    if (body === undefined) {
      const stored = await store.get(key);
      if (stored === undefined) return undefined;
      const newline = stored.indexOf('\n');
      if (newline === -1) return undefined;
      const line = stored.slice(0, newline);
      const text = stored.slice(newline + 1);
      body = { state: line === '' ? undefined : (JSON.parse(line) as unknown), text, bytes: Buffer.from(text, 'utf8') };
      remember(key, body);
    }
    return {
      body: {
        text: body.text,
        bytes: body.bytes,
        ttlMs,
        ...(body.state === undefined ? {} : { state: body.state }),
      },
      bodyMac: record.b,
      at: record.at,
      ttl: record.ttl,
    };
  };

  const record = (at: number, ttl: number, bodyMac: string) => JSON.stringify({ at, ttl, b: bodyMac });

  const lookup = async (call: ResultCall): Promise<ResultLookup> => {
    const { tenantId } = call;
    const uncached = async (): Promise<ResultLookup> => ({
      body: await call.fetch(call.signal),
      ttlMs: undefined,
    });
    if (!call.cacheable) {
      deps.count(tenantId, 'bypasses');
      return uncached();
    }
    let ownKey: string;
    let viewKey: string | undefined;
    let found: Awaited<ReturnType<typeof resolve>>;
    try {
      const revision = call.revision ?? 0;
      const generation = await deps.generation(tenantId, revision);
      const entry = (who: string) =>
        keys.entry({ layer: 'result', tenantId, generation, revision, who, method: call.method, params: call.params });
      ownKey = entry(call.who);
      found = await resolve(tenantId, await store.get(ownKey));
      if (found === undefined && call.view !== undefined) {
        viewKey = entry(`view:${call.view}`);
        found = await resolve(tenantId, await store.get(viewKey));
        if (found !== undefined && found.body.ttlMs > 0) {
          // The caller's own entry, ending when the one it was copied from ends.
          const copy = record(found.at, found.ttl, found.bodyMac);
          // A failed write loses the copy, not the hit.
          await store.set(ownKey, copy, found.body.ttlMs).catch((error: unknown) => deps.failed(tenantId, error));
        }
      }
    } catch (error) {
      deps.failed(tenantId, error);
      return uncached();
    }
    if (found !== undefined) {
      deps.count(tenantId, 'hits');
      return { body: found.body, ttlMs: found.body.ttlMs };
    }
    deps.count(tenantId, 'misses');
    const flightKey = ownKey;
    const shareKey = viewKey;
    // Collapsed per caller: a flight's answer is never handed to another fingerprint.
    const body = await flights.run(flightKey, call.signal, async (signal) => {
      const fetched = await call.fetch(signal);
      const ttl = Math.floor(fetched?.ttlMs ?? 0);
      if (fetched === undefined || !(ttl > 0)) return fetched;
      const stored = `${fetched.state === undefined ? '' : JSON.stringify(fetched.state)}\n${fetched.text}`;
      if (stored.length > deps.maxValueBytes) return fetched;
      const at = now();
      const bodyMac = keys.bodyMac(tenantId, stored);
      const entryRecord = record(at, ttl, bodyMac);
      // The body first: an entry is never written before what it points at.
      await store
        .set(keys.body(tenantId, bodyMac), stored, ttl)
        .then(() =>
          shareKey === undefined || fetched.private === true ? undefined : store.set(shareKey, entryRecord, ttl),
        )
        .then(() => store.set(flightKey, entryRecord, ttl))
        .catch((error: unknown) => deps.failed(tenantId, error));
      return fetched;
    });
    return { body, ttlMs: undefined };
  };
  return Object.assign(lookup, {
    forget(prefix: string) {
      for (const [key, body] of decoded) {
        if (!key.startsWith(prefix)) continue;
        decoded.delete(key);
        decodedChars -= body.text.length + body.bytes.length;
      }
    },
  });
}

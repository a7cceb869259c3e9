import type { Principal } from './principal.js';
import type { SourceFailureReason } from './source-failure-reason.js';
import type { ListingRange } from './listing-ranges.js';
import type { ResourceContents, ResourceDescriptor, ResourceTemplateDescriptor } from './resource.js';

/**
 * A backend that publishes resources: the one interface every source package
 * implements (static, files, postgres, s3, ...). A source is created once per
 * tenant configuration and shared by all of that tenant's callers, so it keeps
 * nothing per caller: the policy layer filters what it returns, and a read is
 * told what the caller may see (`visible`) so that a read made of several
 * resources never loads or mentions one the caller may not see. A source
 * that answers each caller under a backend identity of their own is also
 * told who asks (`caller`) and says so with `backendIdentity`.
 */
export interface Source {
  /** Unique within its tenant; a URI-safe slug (`[a-z0-9][a-z0-9-]*`). */
  readonly id: string;
  /** The source type, e.g. `"files"`; used in logs and metrics. */
  readonly kind: string;
  /** Freshness hints: the `ttlMs` the gateway returns for results this source shaped. */
  readonly ttlMs: SourceTtlMs;

  /**
   * One page of descriptors in a deterministic order. `page.position` is the
   * value this source returned as `nextPosition` for the previous page (absent
   * on the first page); it is opaque to everyone else and travels inside the
   * gateway's encrypted cursor, so it may be any string the source can parse
   * back, including names the caller may not see.
   * A position the source cannot parse must throw `invalidPosition()`.
   */
  listResources(page: PageRequest, signal?: AbortSignal): Promise<Page<ResourceDescriptor>>;

  /** All templates of this source; expected to be small, so not paginated. */
  listTemplates(signal?: AbortSignal): Promise<ResourceTemplateDescriptor[]>;

  /**
   * Whether `uri` is in this source's URI space (its prefix or its declared URIs),
   * whether or not the resource exists. The catalog routes a read to the one
   * source that owns the URI. Must be cheap and must not do I/O.
   */
  owns(uri: string): boolean;

  /**
   * The contents of `uri`, or `undefined` when no such resource exists (the
   * caller turns that into -32602, never into an empty `contents`). A URI that
   * is malformed for this source (traversal, bad encoding, injection attempts)
   * is also reported as `undefined`: the client learns only "not found".
   * Backend failures throw; the gateway answers -32603 and logs the cause.
   *
   * A read that gathers other resources (a folder read) includes, counts,
   * describes and fetches only the URIs `visible` admits: filtering afterwards
   * would still load hidden data and let counts and notes describe it. Absent
   * means everything is visible. The result depends on `visible`, so a source
   * must not reuse it for another caller.
   */
  read(
    uri: string,
    signal?: AbortSignal,
    visible?: VisibleUri,
    caller?: SourceCaller,
  ): Promise<ResourceContents[] | undefined>;

  /**
   * Present on a source whose answers depend on who asks beyond what
   * `visible` says: one that runs each caller's listing and reads under a
   * backend identity derived from their verified claims (a database role
   * and settings that row-level security reads). Returns the identity
   * `caller` gets (absent caller: the one for no caller). Every cache keys
   * this source's listing pages and reads by `key`, so callers share an
   * entry exactly when their keys are equal. A pure function of its input,
   * without I/O; the source uses the same identity when it answers.
   * Templates must not depend on it: they are shared by every caller.
   */
  backendIdentity?(caller: SourceCaller | undefined): BackendIdentity;

  /** Optional change feed; returns an unsubscribe function. */
  watch?(listener: (change: SourceChange) => void): () => void;

  /**
   * With `watch`: resolves once change detection has nothing in flight (no
   * scan, comparison or debounce pending). Tests wait on it instead of sleeping.
   */
  settled?(): Promise<void>;

  /** A cheap liveness probe of the backend. */
  health(signal?: AbortSignal): Promise<SourceHealth>;

  /** Releases pools, timers and watchers. Called once at shutdown. */
  close(): Promise<void>;
}

/**
 * Who is asking, for a source that answers each caller under their own
 * backend identity (`Source.backendIdentity`): the verified principal, never
 * the token. The catalog passes the one its caller's `AccessScope` carries.
 */
export interface SourceCaller {
  readonly tenantId: string;
  readonly principal: Principal;
  /** The caller's `AccessScope.fingerprint`: what a backend's audit trail may name them by. */
  readonly fingerprint: string;
}

/** The backend identity a caller gets at one source (`Source.backendIdentity`). */
export interface BackendIdentity {
  /** Equal for callers the backend treats alike, different otherwise: what caches key this source's answers by. */
  readonly key: string;
  /**
   * What an admin is shown of it ("preview as"): e.g. the database role and
   * the settings a policy reads. Never credentials.
   */
  readonly shown: Readonly<Record<string, unknown>>;
}

/**
 * Whether the caller may see a URI of the source being read: the catalog
 * passes its caller's access scope (`AccessScope.allows`) narrowed to that source.
 */
export type VisibleUri = (uri: string) => boolean;

/**
 * A source's `ttlMs`, in milliseconds: the same name and shape as the
 * `ttlMs` key of a source entry in configuration and as the result field on
 * the wire (MCP 2026-07-28, server utilities, caching).
 */
export interface SourceTtlMs {
  /** `ttlMs` for list and template-list pages (0 disables caching). */
  list: number;
  /** `ttlMs` for reads (0 disables caching). */
  read: number;
}

export const DEFAULT_SOURCE_TTL_MS: SourceTtlMs = { list: 60_000, read: 30_000 };

export interface PageRequest {
  /** Absent for the first page. */
  position?: string;
  /** The most descriptors the caller wants; a source may return fewer. */
  limit: number;
  /**
   * A narrowing the catalog derives from the caller's grants: every URI this
   * caller may see of the source starts with one of these URI prefixes
   * (normalized by `normalizePrefixes`: no duplicates, none covered by a
   * shorter one, sorted). Absent means no narrowing (a full scan); empty
   * never reaches a source (the catalog skips it). A source may list only the
   * matching part of its backend, and must then keep positions meaningful
   * for the same request: the catalog still filters every item by the
   * caller's scope, so this only saves work, it never decides visibility.
   */
  prefixes?: readonly string[];
  /**
   * With `prefixes`: the same prefixes, in the same order, each with the
   * shape of what the grants reach after it (`ListingRange`: a subtree, a
   * number of levels, or one URI). A source that can list by shape (one
   * level with an S3 delimiter, one entry instead of a folder walk) does, so
   * a page needs one backend call per range; it may leave out anything its
   * range does not admit (`rangeAdmits`), and its positions must stay
   * meaningful for the same request.
   */
  ranges?: readonly ListingRange[];
  /**
   * With `ranges`: whether the caller may see a URI (as for `read`), so a
   * source that has to pass over entries to fill a page (a shape it cannot
   * ask its backend for, such as `*.csv` within a level) passes over the
   * invisible ones too, and one backend call per range goes as far as it
   * can. The result then depends on it: `view` (the caller's
   * `AccessScope.view`, equal for equal grants) names it for caches.
   */
  visible?: VisibleUri;
  view?: string;
  /**
   * The caller, for a source with `backendIdentity`: it lists under that
   * caller's identity, and caches key the page by it.
   */
  caller?: SourceCaller;
}

export interface Page<T> {
  items: T[];
  /** Absent when this was the last page. */
  nextPosition?: string;
  /**
   * How much longer this page is fresh (its `ttlMs` left), when it came out
   * of a cache rather than the backend; the catalog never promises a client
   * more than this.
   */
  ttlMs?: number;
  /**
   * True when a configured bound of the source (not the caller's view) left
   * entries out of this page's part of the listing; the catalog names the
   * source to the client (`dev.mcpgw/incompleteSources`), so nothing is
   * hidden silently. Each source's docs say which bound.
   */
  incomplete?: boolean;
}

/**
 * What a source's change feed reports (`Source.watch`). Each change names the
 * resources it is about, so that whoever passes it on can tell, per caller,
 * whether that caller may see anything of it (a caller told of a change to
 * resources outside their grants would learn that those exist and move).
 */
export type SourceChange =
  /** Resources came or went: `uris` names each of them (never empty). */
  | { type: 'list-changed'; uris: readonly string[] }
  /**
   * `uri` reads differently. With `because`: only because the resources it
   * shows, named there, changed (a folder's files, a schema's tables); the
   * resource reads differently for a caller only if they may see one of those.
   */
  | { type: 'resource-updated'; uri: string; because?: readonly string[] };

export interface SourceHealth {
  ok: boolean;
  /** A short operator-facing detail; never credentials or connection strings. */
  detail?: string;
  /** When not ok: why, as a class an admin can act on (sourceFailureReason of the driver's error). */
  reason?: SourceFailureReason;
}

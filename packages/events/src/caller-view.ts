import { createHash } from 'node:crypto';
import type { AccessScope, Principal } from '@mcpgw/core';
import { unrestrictedScope } from '@mcpgw/core';
import type { ListenedSourceEntry, ListenedTenant } from './listened-tenant.js';

/** Who a listen stream serves: enough to work out their resource set again under any runtime. */
export interface StreamCaller {
  readonly tenantId: string;
  /** Absent for an anonymous (loopback development) tenant. */
  readonly principal: Principal | undefined;
}

/** A caller's resource set under the tenant's serving runtime, or why they have none any more. */
export type CallerView =
  | { readonly ok: true; readonly runtime: ListenedTenant; readonly scope: AccessScope }
  | { readonly ok: false; readonly reason: 'tenant-gone' | 'access-revoked' };

/**
 * The caller's view now, from the serving runtime and without holding it (a
 * stream must not keep a retired runtime from closing): the same grants
 * `resources/list` and `resources/read` apply, resolved for the principal
 * the stream was opened with.
 */
export function resolveCallerView(tenants: ReadonlyMap<string, ListenedTenant>, caller: StreamCaller): CallerView {
  const runtime = tenants.get(caller.tenantId);
  if (runtime === undefined) return { ok: false, reason: 'tenant-gone' };
  if (runtime.auth === undefined) return { ok: true, runtime, scope: unrestrictedScope };
  // A tenant that started authenticating: an anonymous stream has no principal to resolve.
  const scope = caller.principal === undefined ? undefined : runtime.auth.accessOf(caller.principal);
  return scope === undefined ? { ok: false, reason: 'access-revoked' } : { ok: true, runtime, scope };
}

/**
 * The id of the source whose resource `uri` is, when the caller may see it;
 * else undefined. The same routing and test as a read (the catalog: the first
 * source that owns the URI, then the caller's grants), so a URI outside the
 * caller's set and one no source owns look the same.
 */
export function visibleSourceOf(runtime: ListenedTenant, scope: AccessScope, uri: string): string | undefined {
  const owner = runtime.catalog.sources.find((source) => source.owns(uri));
  if (owner === undefined || !scope.allowsSource(owner.id) || !scope.allows(owner.id, uri)) return undefined;
  return owner.id;
}

/**
 * What decides the caller's resource set besides the backends' contents: the
 * grants that match them (`AccessScope.view`) and, for each source they can
 * see, what of its configuration their listing shows (`listingPart`). Equal
 * digests before and after a configuration change mean their set did not
 * move, so they get no `list_changed` for it, whatever changed for others.
 */
export function viewDigest(runtime: ListenedTenant, scope: AccessScope): string {
  // A pure function of the runtime and the view (the grants that matched decide `allowsSource` and
  // `allows`): worked out once per distinct view and runtime, not once per stream of that view.
  const memo = scope.view === undefined ? undefined : memoOf(viewDigests, runtime);
  const known = memo?.get(scope.view!);
  if (known !== undefined) return known;
  const visible = runtime.config.sources
    .filter((entry) => scope.allowsSource(entry.id))
    .map((entry) => listingPart(entry, scope));
  const value = digest([scope.view ?? scope.fingerprint, visible]);
  memo?.set(scope.view!, value);
  return value;
}

/** Entries kept per runtime in each memo: past it, the memo starts again (grants by subject make a view per caller). */
const MEMO_ENTRIES = 4096;
/** `viewDigest` by view, and `readDigests` by URI, of each runtime (dropped with it). */
const viewDigests = new WeakMap<ListenedTenant, Map<string, string>>();
const uriDigests = new WeakMap<ListenedTenant, Map<string, string>>();

function memoOf(memos: WeakMap<ListenedTenant, Map<string, string>>, runtime: ListenedTenant): Map<string, string> {
  let memo = memos.get(runtime);
  if (memo === undefined) memos.set(runtime, (memo = new Map()));
  else if (memo.size >= MEMO_ENTRIES) memo.clear();
  return memo;
}

/**
 * For each of `uris`, a digest of what its read depends on in the
 * configuration: the source that owns it (routed as a read) and that
 * source's configuration as it bears on this URI (`readPart`). A
 * configuration change that alters a URI's digest may change what it reads
 * (a static source's text is its configuration), so its subscribers get
 * `updated`; one that alters only other resources leaves it alone.
 */
export function readDigests(runtime: ListenedTenant, uris: Iterable<string>): Map<string, string> {
  const digests = new Map<string, string>();
  // A static source's resources by URI, indexed once per call (a stream may subscribe to many of them).
  const indexed = new Map<string, ReadonlyMap<string, StaticResourceEntry>>();
  // A pure function of the runtime and the URI: once per URI and runtime, whoever subscribed to it.
  const memo = memoOf(uriDigests, runtime);
  for (const uri of uris) {
    let value = memo.get(uri);
    if (value === undefined) {
      const owner = runtime.catalog.sources.find((source) => source.owns(uri));
      const entry = owner === undefined ? undefined : runtime.config.sources.find((source) => source.id === owner.id);
      value = digest([owner?.id ?? null, entry === undefined ? null : readPart(entry, uri, indexed)]);
      memo.set(uri, value);
    }
    digests.set(uri, value);
  }
  return digests;
}

/** A source entry of the tenant's configuration. */
type SourceEntry = ListenedSourceEntry;

/** A `static` source's resource entry: its descriptor's fields and its body. */
interface StaticResourceEntry {
  readonly uri: string;
  readonly text?: string;
  readonly blob?: string;
  readonly [field: string]: unknown;
}

/**
 * The resources of a `static` source, which its configuration declares one
 * by one (the one source type whose resources are its configuration: every
 * other type's come from its backend, where any change to the entry may move
 * any of them). Undefined for any other type.
 */
function staticResources(entry: SourceEntry): readonly StaticResourceEntry[] | undefined {
  if (entry.type !== 'static') return undefined;
  const resources = (entry.options as { resources?: unknown } | undefined)?.resources;
  return Array.isArray(resources) ? (resources as StaticResourceEntry[]) : [];
}

/**
 * What the caller's listing shows of a source's configuration: of a static
 * source, the descriptors (not the bodies) of the resources they may see and
 * its templates; of any other source, the whole entry.
 */
function listingPart(entry: SourceEntry, scope: AccessScope): unknown {
  const resources = staticResources(entry);
  if (resources === undefined) return entry;
  return {
    id: entry.id,
    type: entry.type,
    resources: resources
      .filter((resource) => scope.allows(entry.id, resource.uri))
      .map(({ text: _text, blob: _blob, ...descriptor }) => descriptor),
    templates: (entry.options as { templates?: unknown } | undefined)?.templates ?? [],
  };
}

/**
 * What a read of `uri` depends on in its source's configuration: of a static
 * source, the entry of that resource (or, for a URI of one of its templates,
 * the templates); of any other source, the whole entry.
 */
function readPart(
  entry: SourceEntry,
  uri: string,
  indexed: Map<string, ReadonlyMap<string, StaticResourceEntry>>,
): unknown {
  let byUri = indexed.get(entry.id);
  if (byUri === undefined) {
    const resources = staticResources(entry);
    if (resources === undefined) return entry;
    byUri = new Map(resources.map((resource) => [resource.uri, resource]));
    indexed.set(entry.id, byUri);
  }
  return byUri.get(uri) ?? { templates: (entry.options as { templates?: unknown } | undefined)?.templates ?? [] };
}

function digest(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('base64url');
}

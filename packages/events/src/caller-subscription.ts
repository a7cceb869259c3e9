import type { RequestId, StreamNotification } from '@mcpgw/protocol';
import { resourceListChangedNotification, resourceUpdatedNotification } from '@mcpgw/protocol';
import type { AccessScope } from '@mcpgw/core';
import type { ListenedTenant } from './listened-tenant.js';
import type { StreamCaller } from './caller-view.js';
import { readDigests, resolveCallerView, viewDigest, visibleSourceOf } from './caller-view.js';
import type { BackendView, BackendViews } from './backend-views.js';
import { createBackendViews } from './backend-views.js';
import type { TenantEvent, TenantEventBus } from './tenant-events.js';

/** Why the server ends a stream on its own initiative. */
export type CompletionReason = 'token-expired' | 'tenant-gone' | 'access-revoked' | 'shutdown';

/** Where a subscription's messages go: the stream the route opened. */
export interface SubscriptionOutput {
  send(message: StreamNotification): void;
  /** The graceful end (basic/patterns/subscriptions, "Graceful Closure"); the stream then closes. */
  complete(reason: CompletionReason): void;
}

export interface CallerSubscriptionOptions {
  /** The listen request's id, which tags every message. */
  readonly id: RequestId;
  readonly caller: StreamCaller;
  /** The honored filter: `resourcesListChanged`, and the `resourceSubscriptions` the caller may see. */
  readonly listChanged: boolean;
  readonly uris: ReadonlySet<string>;
  /** The caller's `viewDigest` when the stream opened. */
  readonly digest: string;
  /** `readDigests` of the honored URIs when the stream opened. */
  readonly reads: ReadonlyMap<string, string>;
  /** The serving runtimes: looked up per event, never held. */
  readonly tenants: ReadonlyMap<string, ListenedTenant>;
  readonly bus: TenantEventBus;
  /** At most one `list_changed` per this many milliseconds; the last of a burst is sent after the wait. */
  readonly listChangedIntervalMs: number;
  readonly output: SubscriptionOutput;
  /**
   * The views of sources that answer under each caller's backend identity,
   * shared by this replica's streams (one listing per identity and event).
   * Absent: this subscription keeps its own.
   */
  readonly backendViews?: BackendViews;
}

/**
 * Whether any of `uris` is one the caller may see. Where the answer depends
 * on nothing but the runtime and the caller's view (a source that does not
 * answer under each caller's own backend identity), it is worked out once
 * per view for the event, which reaches every stream of the tenant as the
 * same object, and the streams of the same view reuse it.
 */
function seesAny(
  event: TenantEvent & { type: 'source' },
  runtime: ListenedTenant,
  scope: AccessScope,
  uris: readonly string[],
  sees: (uri: string) => boolean,
): boolean {
  const source = runtime.catalog.sources.find((candidate) => candidate.id === event.sourceId);
  if (scope.view === undefined || source === undefined || source.backendIdentity !== undefined) return uris.some(sees);
  let memo = seenByView.get(event);
  if (memo?.runtime !== runtime) seenByView.set(event, (memo = { runtime, byView: new Map() }));
  let seen = memo.byView.get(scope.view);
  if (seen === undefined) memo.byView.set(scope.view, (seen = uris.some(sees)));
  return seen;
}
const seenByView = new WeakMap<TenantEvent, { runtime: ListenedTenant; byView: Map<string, boolean> }>();

/** The longest delay `setTimeout` keeps (2^31 - 1 ms); a later expiry is checked again then. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * One caller's subscription: turns the tenant's events (tenant-wide, never
 * filtered) into the notifications this caller may receive, each decided
 * against the caller's resource set as the serving runtime gives it at that
 * moment: `list_changed` only when resources they may see came or went (or a
 * configuration change moved their set), `updated` only for a subscribed URI
 * they may see that reads differently for them. A change to resources outside
 * their set reaches them as nothing at all, so a stream reveals no more than
 * their own reads and listings would (2026-07-28 server/resources,
 * "Security Considerations": resource permissions are checked before
 * operations, and a notification is one). At a source that answers each
 * caller under a backend identity of their own, "may see" is also "their
 * identity lists it" (`BackendViews`): such an event is decided once that
 * identity's listing is in, and events stay in order. Ends the stream when
 * the token expires or the caller loses the tenant. Returns the function
 * that frees everything it holds (the bus listener, its timers and the
 * backend views it holds); safe to call twice.
 */
export function startCallerSubscription(options: CallerSubscriptionOptions): () => void {
  const { id, caller, uris, tenants, output } = options;
  let digest = options.digest;
  let reads = options.reads;
  let lastListChangedAt = Number.NEGATIVE_INFINITY;
  let pendingListChanged: NodeJS.Timeout | undefined;
  let expiry: NodeJS.Timeout | undefined;
  let stopped = false;

  const sendListChanged = () => {
    pendingListChanged = undefined;
    lastListChangedAt = performance.now();
    output.send(resourceListChangedNotification(id));
  };
  /** Leading edge when the interval has passed, else one trailing send that covers the whole burst. */
  const listChanged = () => {
    if (!options.listChanged || pendingListChanged !== undefined) return;
    const wait = lastListChangedAt + options.listChangedIntervalMs - performance.now();
    if (wait <= 0) sendListChanged();
    else pendingListChanged = setTimeout(sendListChanged, wait);
  };

  const views = options.backendViews ?? createBackendViews();
  /** The identity views this stream holds, per source id, under the identity it last had there. */
  const held = new Map<string, { key: string; release: () => void }>();
  /**
   * Holds the view of every source the caller may see that answers under
   * their backend identity, under the identity the serving runtime gives
   * them now (a new mapping or revision may give another); lets go of the rest.
   */
  const holdViews = (runtime: ListenedTenant, scope: AccessScope) => {
    const wanted = new Set<string>();
    for (const source of runtime.catalog.sources) {
      if (source.backendIdentity === undefined || !scope.allowsSource(source.id)) continue;
      wanted.add(source.id);
      const key = source.backendIdentity(scope.caller).key;
      const before = held.get(source.id);
      if (before?.key === key) continue;
      before?.release();
      held.set(source.id, { key, release: views.hold(caller.tenantId, source, scope.caller) });
    }
    for (const [sourceId, entry] of held) {
      if (wanted.has(sourceId)) continue;
      entry.release();
      held.delete(sourceId);
    }
  };
  const releaseViews = () => {
    for (const entry of held.values()) entry.release();
    held.clear();
  };

  /**
   * For each source of `sourceIds` that answers under the caller's backend
   * identity: its view for this event (relisted when resources came or
   * went), shared with every stream of the same identity.
   */
  const lookUp = (
    runtime: ListenedTenant,
    scope: AccessScope,
    sourceIds: Iterable<string>,
    event: TenantEvent,
    relist: boolean,
  ) => {
    const looks: Promise<readonly [string, BackendView | undefined]>[] = [];
    for (const sourceId of new Set(sourceIds)) {
      const source = runtime.catalog.sources.find((candidate) => candidate.id === sourceId);
      if (source?.backendIdentity === undefined || !held.has(sourceId)) continue;
      const look = views.look(caller.tenantId, source, scope.caller, event, relist);
      looks.push(look.then((view) => [sourceId, view] as const));
    }
    return looks;
  };

  /**
   * Whether the caller may see `uri`: the same routing and grants as a read
   * and, at a source that answers under their backend identity, listed under
   * it (their database role may read the table, their S3 role the key). An
   * identity whose view is unknown shows nothing.
   */
  const seesWith =
    (runtime: ListenedTenant, scope: AccessScope, backend: ReadonlyMap<string, BackendView | undefined>) =>
    (uri: string): string | undefined => {
      const sourceId = visibleSourceOf(runtime, scope, uri);
      if (sourceId === undefined) return undefined;
      const owner = runtime.catalog.sources.find((source) => source.id === sourceId);
      if (owner?.backendIdentity === undefined) return sourceId;
      return backend.get(sourceId)?.shows(uri) === true ? sourceId : undefined;
    };

  const decide = (
    event: TenantEvent,
    runtime: ListenedTenant,
    scope: AccessScope,
    backend: ReadonlyMap<string, BackendView | undefined>,
  ) => {
    const visible = seesWith(runtime, scope, backend);
    switch (event.type) {
      case 'source': {
        if (!scope.allowsSource(event.sourceId)) return;
        // The same routing and grants as a read of the URI: a resource of this source the caller may see.
        const sees = (uri: string) => visible(uri) === event.sourceId;
        const { change } = event;
        // Their listing moved only if something they may see came or went.
        if (change.type === 'list-changed') {
          if (options.listChanged && seesAny(event, runtime, scope, change.uris, sees)) listChanged();
          return;
        }
        if (!uris.has(change.uri) || !sees(change.uri)) return;
        // A folder or schema overview shows only what the caller may see: it reads differently
        // for them only if one of the changed resources it shows is theirs to see.
        if (change.because !== undefined && !change.because.some(sees)) return;
        output.send(resourceUpdatedNotification(id, change.uri));
        return;
      }
      case 'configuration': {
        // A subscribed resource whose configuration changed (a static source's text) may read differently now.
        const nextReads = readDigests(runtime, uris);
        for (const uri of uris) {
          if (visible(uri) !== undefined && reads.get(uri) !== nextReads.get(uri)) {
            output.send(resourceUpdatedNotification(id, uri));
          }
        }
        reads = nextReads;
        const next = viewDigest(runtime, scope);
        if (next === digest) return;
        digest = next;
        return listChanged();
      }
      case 'stale':
        // Events may have been missed: the list, and every subscribed resource still visible, may differ.
        listChanged();
        for (const uri of uris) {
          if (visible(uri) !== undefined) output.send(resourceUpdatedNotification(id, uri));
        }
        return;
    }
  };

  /** Decisions that wait for a backend view, in order: a later event is decided after an earlier one. */
  let queue: Promise<void> = Promise.resolve();
  let waiting = 0;
  const owners = (runtime: ListenedTenant, scope: AccessScope) =>
    [...uris].flatMap((uri) => visibleSourceOf(runtime, scope, uri) ?? []);

  const onEvent = (event: TenantEvent) => {
    if (stopped) return;
    const view = resolveCallerView(tenants, caller);
    if (!view.ok) return output.complete(view.reason);
    const { runtime, scope } = view;
    holdViews(runtime, scope);
    const looks =
      event.type === 'source'
        ? scope.allowsSource(event.sourceId)
          ? lookUp(runtime, scope, [event.sourceId], event, event.change.type === 'list-changed')
          : []
        : event.type === 'stale'
          ? // Missed events may have moved any identity's listing.
            lookUp(runtime, scope, held.keys(), event, true)
          : lookUp(runtime, scope, owners(runtime, scope), event, false);
    if (looks.length === 0 && waiting === 0) return decide(event, runtime, scope, new Map());
    waiting += 1;
    const looked = Promise.all(looks);
    queue = queue
      .then(async () => {
        const backend = new Map(await looked);
        waiting -= 1;
        if (!stopped) decide(event, runtime, scope, backend);
      })
      .catch((error: unknown) => {
        // A failed send must not stop the decisions after it; the stream itself reports its own end.
        void error;
      });
  };
  // The views are held from the start, so the first change has a listing from before it to compare with.
  const opened = resolveCallerView(tenants, caller);
  if (opened.ok) holdViews(opened.runtime, opened.scope);
  const unsubscribe = options.bus.subscribe(caller.tenantId, onEvent);

  const expiresAtMs = caller.principal === undefined ? undefined : caller.principal.expiresAt * 1000;
  const watchExpiry = () => {
    if (expiresAtMs === undefined || stopped) return;
    const left = expiresAtMs - Date.now();
    if (left <= 0) return output.complete('token-expired');
    expiry = setTimeout(watchExpiry, Math.min(left, MAX_TIMER_MS));
  };
  watchExpiry();

  return () => {
    if (stopped) return;
    stopped = true;
    unsubscribe();
    releaseViews();
    clearTimeout(pendingListChanged);
    clearTimeout(expiry);
  };
}

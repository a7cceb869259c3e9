import type { RequestId, StreamNotification } from '@mcpgw/protocol';
import { resourceListChangedNotification, resourceUpdatedNotification } from '@mcpgw/protocol';
import type { ListenedTenant } from './listened-tenant.js';
import type { StreamCaller } from './caller-view.js';
import { readDigests, resolveCallerView, viewDigest, visibleSourceOf } from './caller-view.js';
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
}

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
 * operations, and a notification is one). Ends the stream when the token expires or the caller loses the
 * tenant. Returns the function that frees everything it holds (the bus
 * listener and its timers); safe to call twice.
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

  const onEvent = (event: TenantEvent) => {
    if (stopped) return;
    const view = resolveCallerView(tenants, caller);
    if (!view.ok) return output.complete(view.reason);
    const { runtime, scope } = view;
    switch (event.type) {
      case 'source': {
        if (!scope.allowsSource(event.sourceId)) return;
        // The same routing and grants as a read of the URI: a resource of this source the caller may see.
        const sees = (uri: string) => visibleSourceOf(runtime, scope, uri) === event.sourceId;
        const { change } = event;
        // Their listing moved only if something they may see came or went.
        if (change.type === 'list-changed') {
          if (options.listChanged && change.uris.some(sees)) listChanged();
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
          if (visibleSourceOf(runtime, scope, uri) !== undefined && reads.get(uri) !== nextReads.get(uri)) {
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
          if (visibleSourceOf(runtime, scope, uri) !== undefined) output.send(resourceUpdatedNotification(id, uri));
        }
        return;
    }
  };
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
    clearTimeout(pendingListChanged);
    clearTimeout(expiry);
  };
}

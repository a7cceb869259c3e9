import type { RequestId, StreamNotification } from '@mcpgw/protocol';
import { resourceListChangedNotification, resourceUpdatedNotification } from '@mcpgw/protocol';
import type { TenantRuntime } from '../tenant-runtime.js';
import type { StreamCaller } from './caller-view.js';
import { ownerDigests, resolveCallerView, viewDigest, visibleSourceOf } from './caller-view.js';
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
  /** `ownerDigests` of the honored URIs when the stream opened. */
  readonly owners: ReadonlyMap<string, string>;
  /** The serving runtimes: looked up per event, never held. */
  readonly tenants: ReadonlyMap<string, TenantRuntime>;
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
 * moment. Ends the stream when the token expires or the caller loses the
 * tenant. Returns the function that frees everything it holds (the bus
 * listener and its timers); safe to call twice.
 */
export function startCallerSubscription(options: CallerSubscriptionOptions): () => void {
  const { id, caller, uris, tenants, output } = options;
  let digest = options.digest;
  let owners = options.owners;
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
        const { change } = event;
        if (change.type === 'list-changed') return listChanged();
        if (uris.has(change.uri) && visibleSourceOf(runtime, scope, change.uri) === event.sourceId) {
          output.send(resourceUpdatedNotification(id, change.uri));
        }
        return;
      }
      case 'configuration': {
        // A subscribed resource whose source was reconfigured may read differently now.
        const nextOwners = ownerDigests(runtime, uris);
        for (const uri of uris) {
          const owner = visibleSourceOf(runtime, scope, uri);
          if (owner !== undefined && owners.get(owner) !== nextOwners.get(owner)) {
            output.send(resourceUpdatedNotification(id, uri));
          }
        }
        owners = nextOwners;
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

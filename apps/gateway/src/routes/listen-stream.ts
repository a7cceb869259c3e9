import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AccessScope, Logger, Principal } from '@mcpgw/core';
import type { ListenRequest, RequestId, ServerIdentity, SubscriptionFilter } from '@mcpgw/protocol';
import { acknowledgedNotification, listenCompletion, SSE_KEEPALIVE, sseEvent } from '@mcpgw/protocol';
import type { BackendViews, CompletionReason, ListenStreams, StreamSlot, TenantEventBus } from '@mcpgw/events';
import {
  createBackendViews,
  honoredSubscriptions,
  readDigests,
  startCallerSubscription,
  viewDigest,
} from '@mcpgw/events';
import type { TenantRuntime } from '@mcpgw/tenancy';

/** What the MCP route serves listen streams with (built once per app). */
export interface ListenContext {
  readonly streams: ListenStreams;
  readonly bus: TenantEventBus;
  /** The serving runtimes, looked up per event. */
  readonly tenants: ReadonlyMap<string, TenantRuntime>;
  readonly listChangedIntervalMs: number;
  /** The views of sources that answer under each caller's backend identity, shared by this replica's streams. */
  readonly backendViews?: BackendViews;
  /** Told once the acknowledgment went out, with the seconds it took (request metrics). */
  readonly acknowledged?: (request: FastifyRequest, seconds: number) => void;
}

/** The admitted caller of a listen request. */
export interface ListenCaller {
  readonly tenant: TenantRuntime;
  readonly scope: AccessScope;
  readonly principal: Principal | undefined;
  /** Counts the caller's streams (the keyed principal fingerprint; the client address for an anonymous tenant). */
  readonly principalKey: string;
}

/** A listen request accepted but not streaming yet: its place is reserved and its filter decided. */
export interface PendingListen {
  readonly id: RequestId;
  readonly honored: SubscriptionFilter;
  readonly slot: StreamSlot;
  readonly uris: ReadonlySet<string>;
  readonly digest: string;
  readonly reads: ReadonlyMap<string, string>;
}

/**
 * A client that reads nothing while notifications pile up is dropped past
 * this many bytes buffered, rather than holding memory for it without bound.
 */
const MAX_BUFFERED_BYTES = 256 * 1024;

/**
 * Accepts a listen request: reserves a place under the stream caps (or
 * throws MCPGW_LISTEN_LIMIT) and decides the honored filter. Only
 * `resourcesListChanged` and `resourceSubscriptions` are served (no tools or
 * prompts); of the URIs, only those the caller may see are kept
 * (`honoredSubscriptions`: their grants and, at a source that answers under
 * their backend identity, that identity's listing), so a URI the caller may
 * not see is left out exactly like one no source owns.
 */
export async function acceptListen(
  request: ListenRequest,
  caller: ListenCaller,
  context: ListenContext,
): Promise<PendingListen> {
  const tenantId = caller.tenant.config.id;
  const slot = context.streams.reserve(tenantId, caller.principalKey);
  try {
    const { filter } = request;
    const honored: SubscriptionFilter = {};
    if (filter.resourcesListChanged === true) honored.resourcesListChanged = true;
    const uris = await honoredSubscriptions(
      tenantId,
      caller.tenant,
      caller.scope,
      filter.resourceSubscriptions ?? [],
      context.backendViews ?? createBackendViews(),
    );
    if (filter.resourceSubscriptions !== undefined) honored.resourceSubscriptions = uris;
    return {
      id: request.id,
      honored,
      slot,
      uris: new Set(uris),
      digest: viewDigest(caller.tenant, caller.scope),
      reads: readDigests(caller.tenant, uris),
    };
  } catch (error) {
    slot.release();
    throw error;
  }
}

/**
 * Streams an accepted listen request (2026-07-28 basic/patterns/subscriptions):
 * the acknowledgment first, then the caller's notifications, keep-alive
 * comments while idle, and on the server's initiative the completion before
 * the close. `admitted` frees what the request held while it was admitted
 * (the runtime lease and the tenant's in-flight slot): a stream holds neither.
 */
export function streamListen(
  reply: FastifyReply,
  pending: PendingListen,
  caller: ListenCaller,
  context: ListenContext & { admitted: () => void; logger: Logger },
): void {
  const raw = reply.raw;
  const { id, slot } = pending;
  const server: ServerIdentity = caller.tenant.server;
  const tenantId = caller.tenant.config.id;
  if (raw.destroyed) {
    slot.release();
    return;
  }
  reply.hijack();
  // Headers set by hooks so far (the request id, ...) would be lost with the hijack.
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) raw.setHeader(name, value);
  raw.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache, no-transform',
    // basic/transports/streamable-http, "Receiving Messages": keeps proxies such as nginx from buffering.
    'x-accel-buffering': 'no',
  });
  raw.write(sseEvent(acknowledgedNotification(id, pending.honored)));
  context.admitted();
  context.acknowledged?.(reply.request, reply.elapsedTime / 1000);

  const openedAt = performance.now();
  let ended = false;
  // Set once the subscription started; the callbacks below may run before (an expired token).
  const subscription: { stop?: () => void } = {};
  const write = (text: string) => {
    if (ended || raw.destroyed) return;
    if (raw.writableLength > MAX_BUFFERED_BYTES) {
      context.logger.info({ tenant: tenantId }, 'listen stream dropped: the client does not read it');
      raw.destroy();
      return;
    }
    raw.write(text);
  };
  const complete = (reason: CompletionReason) => {
    if (ended) return;
    write(sseEvent(listenCompletion(id, server)));
    ended = true;
    context.logger.info({ tenant: tenantId, reason }, 'listen stream completed');
    subscription.stop?.();
    // The response is done; the socket goes too, so that a shutdown does not wait on it as an idle keep-alive.
    raw.end(() => raw.socket?.end());
  };
  raw.once('close', () => {
    ended = true;
    subscription.stop?.();
    slot.release();
    context.logger.info(
      { tenant: tenantId, seconds: Math.round((performance.now() - openedAt) / 1000) },
      'listen stream closed',
    );
  });
  slot.attach({ keepAlive: () => write(SSE_KEEPALIVE), complete: () => complete('shutdown') });
  const stop = startCallerSubscription({
    id,
    caller: { tenantId, principal: caller.principal },
    listChanged: pending.honored.resourcesListChanged === true,
    uris: pending.uris,
    digest: pending.digest,
    reads: pending.reads,
    tenants: context.tenants,
    bus: context.bus,
    listChangedIntervalMs: context.listChangedIntervalMs,
    ...(context.backendViews === undefined ? {} : { backendViews: context.backendViews }),
    output: { send: (message) => write(sseEvent(message)), complete },
  });
  subscription.stop = stop;
  // The token may have expired as it was admitted (clock tolerance): the subscription ended at once.
  if (ended) stop();
}

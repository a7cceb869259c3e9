import { GatewayError } from '@mcpgw/core';
import type { RequestId } from './envelope.js';
import { isPlainObject } from './envelope.js';
import type { ServerIdentity } from './resource-service.js';
import { resultMeta } from './results.js';

/** The long-lived request (2026-07-28 basic/patterns/subscriptions, "Opening a Stream"). */
export const LISTEN_METHOD = 'subscriptions/listen';

/**
 * Where every message of a listen stream names its subscription: the
 * JSON-RPC id of the `subscriptions/listen` request (2026-07-28
 * basic/patterns/subscriptions, "Receiving Notifications").
 */
export const SUBSCRIPTION_ID_META = 'io.modelcontextprotocol/subscriptionId';

/** At most this many `resourceSubscriptions` per stream; a larger filter is refused, not cut. */
export const MAX_RESOURCE_SUBSCRIPTIONS = 1000;
const MAX_URI_LENGTH = 8192;

/** The `SubscriptionFilter` of the 2026-07-28 schema: every type is opt-in. */
export interface SubscriptionFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
}

/** A `subscriptions/listen` request once its envelope, `_meta` and headers were checked. */
export interface ListenRequest {
  readonly id: RequestId;
  readonly filter: SubscriptionFilter;
}

/**
 * Reads `params.notifications` (required by the schema's
 * `SubscriptionsListenRequestParams`). Wrong types are -32602, so that a
 * client never mistakes a typo for a filter the server chose not to honor.
 */
export function readSubscriptionFilter(params: Record<string, unknown>): SubscriptionFilter {
  const { notifications } = params;
  if (!isPlainObject(notifications)) {
    throw new GatewayError('MCPGW_PARAMS_INVALID', '"notifications" is required and must be an object');
  }
  const filter: SubscriptionFilter = {};
  for (const key of ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'] as const) {
    const value = notifications[key];
    if (value === undefined) continue;
    if (typeof value !== 'boolean') {
      throw new GatewayError('MCPGW_PARAMS_INVALID', `"notifications.${key}" must be a boolean`);
    }
    filter[key] = value;
  }
  const uris = notifications.resourceSubscriptions;
  if (uris !== undefined) {
    if (!Array.isArray(uris) || uris.some((uri) => typeof uri !== 'string' || uri.length > MAX_URI_LENGTH)) {
      throw new GatewayError(
        'MCPGW_PARAMS_INVALID',
        `"notifications.resourceSubscriptions" must be an array of URIs of at most ${MAX_URI_LENGTH} characters`,
      );
    }
    if (uris.length > MAX_RESOURCE_SUBSCRIPTIONS) {
      throw new GatewayError(
        'MCPGW_PARAMS_INVALID',
        `"notifications.resourceSubscriptions" lists more than ${MAX_RESOURCE_SUBSCRIPTIONS} URIs: open several streams`,
      );
    }
    filter.resourceSubscriptions = [...new Set(uris as string[])];
  }
  return filter;
}

/** A JSON-RPC notification of a listen stream, `_meta` already tagged with the subscription id. */
export interface StreamNotification {
  jsonrpc: '2.0';
  method: string;
  params: Record<string, unknown>;
}

/**
 * The first message of every stream: "The `notifications` field in the
 * acknowledgment reflects the subset the server agreed to honor"
 * (basic/patterns/subscriptions, "Acknowledgment").
 */
export function acknowledgedNotification(id: RequestId, honored: SubscriptionFilter): StreamNotification {
  return notification(id, 'notifications/subscriptions/acknowledged', { notifications: honored });
}

/** server/resources, "List Changed Notification". */
export function resourceListChangedNotification(id: RequestId): StreamNotification {
  return notification(id, 'notifications/resources/list_changed', {});
}

/** server/resources, "Subscriptions". */
export function resourceUpdatedNotification(id: RequestId, uri: string): StreamNotification {
  return notification(id, 'notifications/resources/updated', { uri });
}

/**
 * The graceful end of a stream the server closes (shutdown, token expiry):
 * a successful response to the listen request, "correlated by its `id`"
 * and tagged like every other message (basic/patterns/subscriptions,
 * "Graceful Closure"; the schema's `SubscriptionsListenResultResponse`).
 */
export function listenCompletion(
  id: RequestId,
  server: ServerIdentity,
): { jsonrpc: '2.0'; id: RequestId; result: Record<string, unknown> } {
  return {
    jsonrpc: '2.0',
    id,
    result: { resultType: 'complete', _meta: { ...resultMeta(server), [SUBSCRIPTION_ID_META]: id } },
  };
}

function notification(id: RequestId, method: string, params: Record<string, unknown>): StreamNotification {
  return { jsonrpc: '2.0', method, params: { _meta: { [SUBSCRIPTION_ID_META]: id }, ...params } };
}

/**
 * One JSON-RPC message as a Server-Sent Events event (WHATWG HTML, "Server-sent
 * events", section 9.2.6): JSON never holds a raw line break, so one `data` line.
 */
export function sseEvent(message: unknown): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

/**
 * An SSE comment, which clients ignore: the keep-alive of long-lived streams
 * (basic/transports/streamable-http, "Receiving Messages").
 */
export const SSE_KEEPALIVE = ':\n\n';

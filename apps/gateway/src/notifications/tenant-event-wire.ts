import { z } from 'zod';
import type { TenantEvent } from './tenant-events.js';

/**
 * How a tenant event travels over Redis pub/sub: one JSON envelope per
 * message on the tenant's own channel, naming the replica that published it
 * (so that replica skips its own echo). A message that does not parse, that
 * is too large, or that names another tenant than its channel's is dropped by
 * the receiver: Redis may be shared, and nothing read from it is trusted
 * further than this schema.
 */
export const WIRE_VERSION = 1;

/** Far above any real envelope (a URI is bounded below); a larger message is dropped unread. */
export const MAX_MESSAGE_CHARS = 16 * 1024;

const tenantId = z.string().min(1).max(128);
const change = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('list-changed') }),
  z.strictObject({ type: z.literal('resource-updated'), uri: z.string().min(1).max(8192) }),
]);
const event = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('source'), tenantId, sourceId: z.string().min(1).max(128), change }),
  z.strictObject({ type: z.literal('configuration'), tenantId }),
  z.strictObject({ type: z.literal('stale'), tenantId }),
]);
const envelope = z.strictObject({ v: z.literal(WIRE_VERSION), origin: z.string().min(1).max(64), event });

export type Decoded =
  | { readonly ok: true; readonly origin: string; readonly event: TenantEvent }
  | { readonly ok: false; readonly reason: 'too-large' | 'not-json' | 'malformed' | 'foreign-tenant' };

/** The pub/sub channel of one tenant. */
export function tenantChannel(prefix: string, tenantId: string): string {
  return `${prefix}${tenantId}`;
}

export function encodeEnvelope(origin: string, event: TenantEvent): string {
  return JSON.stringify({ v: WIRE_VERSION, origin, event });
}

/** Parses a message received on the channel of `channelTenant`. */
export function decodeEnvelope(channelTenant: string, message: string): Decoded {
  if (message.length > MAX_MESSAGE_CHARS) return { ok: false, reason: 'too-large' };
  let raw: unknown;
  try {
    raw = JSON.parse(message);
  } catch {
    return { ok: false, reason: 'not-json' };
  }
  const parsed = envelope.safeParse(raw);
  if (!parsed.success) return { ok: false, reason: 'malformed' };
  // An event only ever travels on its own tenant's channel; anything else is foreign.
  if (parsed.data.event.tenantId !== channelTenant) return { ok: false, reason: 'foreign-tenant' };
  return { ok: true, origin: parsed.data.origin, event: parsed.data.event };
}

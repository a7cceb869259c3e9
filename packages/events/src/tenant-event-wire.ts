import { z } from 'zod';
import type { SourceChange } from '@mcpgw/core';
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

/** A larger message is dropped unread; `wireChanges` splits a change's URI lists to stay below it. */
export const MAX_MESSAGE_CHARS = 16 * 1024;

/** The JSON characters of the URIs one message carries at most (the rest of an envelope is far below 2 KiB). */
const MAX_URI_CHARS_PER_MESSAGE = 12 * 1024;

const tenantId = z.string().min(1).max(128);
const uri = z.string().min(1).max(8192);
// A change names its resources, so that each replica decides per caller whether they may see it.
const change = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('list-changed'), uris: z.array(uri).min(1) }),
  z.strictObject({ type: z.literal('resource-updated'), uri, because: z.array(uri).min(1).optional() }),
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

/**
 * `change` as pieces that each fit in one message: a list change naming many
 * resources, or a folder update because of many files, is split into several
 * changes of the same kind, each naming some of them. A caller told of each
 * piece that names something they may see learns no more than from the whole.
 */
export function wireChanges(change: SourceChange): SourceChange[] {
  if (change.type === 'list-changed') return chunks(change.uris).map((uris) => ({ type: 'list-changed', uris }));
  if (change.because === undefined) return [change];
  return chunks(change.because).map((because) => ({ type: 'resource-updated', uri: change.uri, because }));
}

function chunks(uris: readonly string[]): string[][] {
  const pieces: string[][] = [];
  let piece: string[] = [];
  let chars = 0;
  for (const uri of uris) {
    const size = JSON.stringify(uri).length + 1;
    if (piece.length > 0 && chars + size > MAX_URI_CHARS_PER_MESSAGE) {
      pieces.push(piece);
      piece = [];
      chars = 0;
    }
    piece.push(uri);
    chars += size;
  }
  if (piece.length > 0) pieces.push(piece);
  return pieces;
}

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

import { z } from 'zod';
import type { SourceChange } from '@mcpgw/core';
import type { TenantEvent } from './tenant-events.js';

/**
 * How a tenant event travels on the replica bus: one JSON envelope per
 * message on the tenant's own topic (the bus says which replica sent it, so
 * that replica skips its own echo). A message that does not parse, that is
 * too large, or that names another tenant than its topic's is dropped by the
 * receiver: Redis or the database may be shared, and nothing read from them
 * is trusted further than this schema. Version 2: the publishing replica's
 * id moved from the envelope to the bus's frame.
 */
export const WIRE_VERSION = 2;

/** A larger message is dropped unread; `wireChanges` splits a change's URI lists to stay below it. */
export const MAX_MESSAGE_CHARS = 16 * 1024;

/** The JSON bytes of the URIs one message carries at most on a bus with room (Redis, in process). */
const MAX_URI_BYTES_PER_MESSAGE = 12 * 1024;

/** What an envelope holds besides its URI lists, at most (ids of 128 characters, the JSON around them). */
export const ENVELOPE_OVERHEAD_BYTES = 1024;

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
const envelope = z.strictObject({ v: z.literal(WIRE_VERSION), event });

export type Decoded =
  | { readonly ok: true; readonly event: TenantEvent }
  | { readonly ok: false; readonly reason: 'too-large' | 'not-json' | 'malformed' | 'foreign-tenant' };

/**
 * `change` as pieces that each fit in one message of a bus carrying
 * `maxMessageBytes` at most: a list change naming many resources, or a
 * folder update because of many files, is split into several changes of the
 * same kind, each naming some of them. A caller told of each piece that
 * names something they may see learns no more than from the whole. (A single
 * URI too long for the bus still goes alone: its publish is refused, and the
 * tenant is owed a `stale` instead.)
 */
export function wireChanges(change: SourceChange, maxMessageBytes = Number.POSITIVE_INFINITY): SourceChange[] {
  const room = Math.min(MAX_URI_BYTES_PER_MESSAGE, maxMessageBytes - ENVELOPE_OVERHEAD_BYTES);
  if (change.type === 'list-changed') return chunks(change.uris, room).map((uris) => ({ type: 'list-changed', uris }));
  if (change.because === undefined) return [change];
  const left = room - Buffer.byteLength(JSON.stringify(change.uri));
  return chunks(change.because, left).map((because) => ({ type: 'resource-updated', uri: change.uri, because }));
}

function chunks(uris: readonly string[], room: number): string[][] {
  const pieces: string[][] = [];
  let piece: string[] = [];
  let bytes = 0;
  for (const uri of uris) {
    const size = Buffer.byteLength(JSON.stringify(uri)) + 1;
    if (piece.length > 0 && bytes + size > room) {
      pieces.push(piece);
      piece = [];
      bytes = 0;
    }
    piece.push(uri);
    bytes += size;
  }
  if (piece.length > 0) pieces.push(piece);
  return pieces;
}

/** The bus topic of one tenant's events. */
export function tenantTopic(prefix: string, tenantId: string): string {
  return `${prefix}${tenantId}`;
}

export function encodeEnvelope(event: TenantEvent): string {
  return JSON.stringify({ v: WIRE_VERSION, event });
}

/** Parses a message received on the topic of `topicTenant`. */
export function decodeEnvelope(topicTenant: string, message: string): Decoded {
  if (message.length > MAX_MESSAGE_CHARS) return { ok: false, reason: 'too-large' };
  let raw: unknown;
  try {
    raw = JSON.parse(message);
  } catch {
    return { ok: false, reason: 'not-json' };
  }
  const parsed = envelope.safeParse(raw);
  if (!parsed.success) return { ok: false, reason: 'malformed' };
  // An event only ever travels on its own tenant's topic; anything else is foreign.
  if (parsed.data.event.tenantId !== topicTenant) return { ok: false, reason: 'foreign-tenant' };
  return { ok: true, event: parsed.data.event };
}

import { RecencyMap } from '@mcpgw/core';
import type { CursorBinding, CursorCodec } from './cursor.js';

export interface CursorReuseOptions {
  /** Longest a sealed cursor is handed out again. Default one minute (it stays valid for the codec's max age). */
  reuseMs?: number;
  /** Cursors remembered at most (least recently used go first). Default 10,000. */
  maxEntries?: number;
  now?: () => number;
}

/**
 * The same codec, except that a cursor sealed for a binding and a state is
 * handed out again, for a short while, to whoever asks for the same binding
 * and state, instead of a fresh AES-GCM sealing per page (about a tenth of
 * the CPU of a listing). The binding holds the caller's fingerprint, so a
 * cursor only ever goes to the caller it is bound to, and it decodes to the
 * same state as a fresh one would: "the cursor is an opaque string"
 * (2026-07-28 server/utilities/pagination), so the client cannot tell. What
 * a repeated cursor does tell an observer of one caller's traffic, that two
 * listings stopped at the same place, the pages themselves tell as well.
 * A reused cursor expires at most `reuseMs` earlier than a fresh one.
 */
export function reuseSealedCursors(codec: CursorCodec, options: CursorReuseOptions = {}): CursorCodec {
  const reuseMs = options.reuseMs ?? 60_000;
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? Date.now;
  /** The least recently used go first (a RecencyMap: handing out a known cursor moves nothing). */
  const sealed = new RecencyMap<string, { cursor: string; until: number }>();
  // JSON of an array is unambiguous: no two (binding, state) pairs share a key.
  const keyOf = (binding: CursorBinding, state: unknown) =>
    JSON.stringify([binding.tenantId, binding.fingerprint, binding.listing, state]);

  return {
    encode(binding, state) {
      const key = keyOf(binding, state);
      const at = now();
      const known = sealed.get(key);
      if (known !== undefined && known.until > at) return known.cursor;
      const cursor = codec.encode(binding, state);
      sealed.set(key, { cursor, until: at + reuseMs });
      if (sealed.size > maxEntries) sealed.evict();
      return cursor;
    },
    decode: (binding, cursor) => codec.decode(binding, cursor),
  };
}

import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { isPlainObject } from './envelope.js';
import { invalidParams } from './mcp-error.js';

/**
 * Opaque pagination cursors (2026-07-28 server/utilities/pagination). A cursor
 * is `base64url(JSON payload) + "." + base64url(HMAC-SHA256)`. It is signed so
 * a client cannot forge a source position, bound to the tenant and principal
 * fingerprint so it is useless to anyone else, and it expires.
 */
export interface CursorBinding {
  tenantId: string;
  /** The principal fingerprint from the policy layer. */
  fingerprint: string;
  /** Which listing the cursor continues, e.g. `"resources"`. */
  listing: string;
}

export interface CursorCodec {
  encode(binding: CursorBinding, state: unknown): string;
  /** Returns the state, or throws -32602 for a tampered, foreign, expired or malformed cursor. */
  decode(binding: CursorBinding, cursor: string): unknown;
}

export interface CursorCodecOptions {
  /** Secret input keying material; the MAC key is derived from it with HKDF. */
  secret: Uint8Array;
  /** How long a cursor stays valid. Default 24 h. */
  maxAgeMs?: number;
  now?: () => number;
}

const MAX_CURSOR_LENGTH = 4096;

export function createCursorCodec(options: CursorCodecOptions): CursorCodec {
  const key = Buffer.from(hkdfSync('sha256', options.secret, new Uint8Array(0), 'mcpgw cursor v1', 32));
  const maxAgeMs = options.maxAgeMs ?? 24 * 60 * 60 * 1000;
  const now = options.now ?? Date.now;
  const sign = (payload: string) => createHmac('sha256', key).update(payload).digest();
  const invalid = () =>
    invalidParams(
      'Invalid cursor: it is malformed, expired, or was issued for another listing or caller; list again without a cursor',
    );

  return {
    encode(binding, state) {
      const payload = Buffer.from(
        JSON.stringify({
          v: 1,
          t: binding.tenantId,
          f: binding.fingerprint,
          l: binding.listing,
          x: now() + maxAgeMs,
          s: state,
        }),
      ).toString('base64url');
      return `${payload}.${sign(payload).toString('base64url')}`;
    },
    decode(binding, cursor) {
      if (cursor.length > MAX_CURSOR_LENGTH) throw invalid();
      const dot = cursor.indexOf('.');
      if (dot <= 0) throw invalid();
      const payload = cursor.slice(0, dot);
      const mac = Buffer.from(cursor.slice(dot + 1), 'base64url');
      const expected = sign(payload);
      if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) throw invalid();
      let decoded: unknown;
      try {
        decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      } catch {
        throw invalid();
      }
      if (
        !isPlainObject(decoded) ||
        decoded.v !== 1 ||
        decoded.t !== binding.tenantId ||
        decoded.f !== binding.fingerprint ||
        decoded.l !== binding.listing ||
        typeof decoded.x !== 'number' ||
        decoded.x < now()
      ) {
        throw invalid();
      }
      return decoded.s;
    },
  };
}

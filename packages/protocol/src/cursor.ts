import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { GatewayError } from '@mcpgw/core';
import { isPlainObject } from './envelope.js';

/**
 * Opaque pagination cursors (2026-07-28 server/utilities/pagination: "the
 * cursor is an opaque string"). A cursor is sealed with AES-256-GCM
 * (NIST SP 800-38D), so a client can neither forge a source position nor
 * read one: the position is where the source stopped before the caller's
 * grants filtered its entries, so it may name things the caller must not see.
 *
 *   cursor    = base64url(version || nonce || ciphertext || tag)
 *   version   = 0x02 (one byte; 0x01 was the signed-but-readable format)
 *   nonce     = 12 random bytes (96 bits, the size GCM is specified for)
 *   plaintext = JSON {x: expiry in ms since the epoch, s: state}, padded with
 *               spaces to a multiple of 32 bytes
 *   AAD       = JSON [version, tenantId, fingerprint, listing]
 *
 * The binding lives in the associated data rather than the plaintext: it is
 * authenticated without being carried, so cursors stay short, nothing about
 * the tenant or principal travels even in sealed form, and a cursor presented
 * under another binding fails the tag check exactly like a forged one (there
 * is no decrypted-but-refused path that could behave differently). The
 * expiry has to come back to us, so it sits inside the plaintext.
 *
 * The padding hides the exact length of the position (a hidden name's
 * length) to 32-byte granularity. Random nonces keep the number of cursors
 * one key may seal far beyond any gateway's lifetime (SP 800-38D §8.3: 2^32
 * invocations with random 96-bit IVs).
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
  /** Returns the state, or throws MCPGW_CURSOR_INVALID for a tampered, foreign, expired or malformed cursor. */
  decode(binding: CursorBinding, cursor: string): unknown;
}

export interface CursorCodecOptions {
  /** The AES-256-GCM key, 32 bytes: `ServerKeys.cursor` from `@mcpgw/core`, which derives it from SECRETS_KEY. */
  key: Uint8Array;
  /** How long a cursor stays valid. Default 24 h. */
  maxAgeMs?: number;
  now?: () => number;
}

const VERSION = 2;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const PAD_TO = 32;
const MAX_CURSOR_LENGTH = 4096;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export function createCursorCodec(options: CursorCodecOptions): CursorCodec {
  if (options.key.length !== 32) throw new TypeError('a cursor key is 32 bytes (AES-256-GCM)');
  const key = options.key;
  const maxAgeMs = options.maxAgeMs ?? 24 * 60 * 60 * 1000;
  const now = options.now ?? Date.now;
  const associatedData = (binding: CursorBinding) =>
    // JSON of an array is unambiguous: no two bindings share an encoding.
    Buffer.from(JSON.stringify([VERSION, binding.tenantId, binding.fingerprint, binding.listing]), 'utf8');
  // One code and one message for every failure: a client learns nothing about which check refused it.
  const invalid = () => new GatewayError('MCPGW_CURSOR_INVALID');

  return {
    encode(binding, state) {
      const json = Buffer.from(JSON.stringify({ x: now() + maxAgeMs, s: state }), 'utf8');
      // Padded with spaces, which are JSON whitespace: the padded text parses as the same value.
      const plaintext = Buffer.alloc(Math.ceil(json.length / PAD_TO) * PAD_TO, 0x20);
      json.copy(plaintext);
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
      cipher.setAAD(associatedData(binding));
      const sealed = Buffer.concat([cipher.update(plaintext), cipher.final()]);
      return Buffer.concat([Buffer.from([VERSION]), nonce, sealed, cipher.getAuthTag()]).toString('base64url');
    },

    decode(binding, cursor) {
      if (cursor.length > MAX_CURSOR_LENGTH || !BASE64URL.test(cursor)) throw invalid();
      const bytes = Buffer.from(cursor, 'base64url');
      // Only the canonical spelling: trailing characters the decoder would drop are tampering too.
      if (bytes.toString('base64url') !== cursor) throw invalid();
      if (bytes.length < 1 + NONCE_BYTES + TAG_BYTES || bytes[0] !== VERSION) throw invalid();
      const nonce = bytes.subarray(1, 1 + NONCE_BYTES);
      const sealed = bytes.subarray(1 + NONCE_BYTES, bytes.length - TAG_BYTES);
      const tag = bytes.subarray(bytes.length - TAG_BYTES);
      let decoded: unknown;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
        decipher.setAAD(associatedData(binding));
        decipher.setAuthTag(tag);
        // final() throws unless the tag matches: nothing unauthenticated is parsed.
        const plaintext = Buffer.concat([decipher.update(sealed), decipher.final()]);
        decoded = JSON.parse(plaintext.toString('utf8'));
      } catch {
        throw invalid();
      }
      if (!isPlainObject(decoded) || typeof decoded.x !== 'number' || decoded.x < now()) throw invalid();
      return decoded.s;
    },
  };
}

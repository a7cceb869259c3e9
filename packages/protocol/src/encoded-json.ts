import { BLOB_BYTES } from '@mcpgw/core';
import type { JsonRpcResponseBody } from './dispatch.js';

/**
 * A JSON value held as its serialized text, e.g. a cached page's `resources`
 * array: the response is written around it, so a cache hit neither parses
 * the stored text nor serializes the same value again. Whoever builds one
 * vouches that `text` is one complete, valid JSON value.
 */
export class EncodedJson {
  /**
   * @param bytes the UTF-8 encoding of `text`, when the holder keeps it: the
   *   response is then assembled as bytes and the text is never encoded again.
   */
  constructor(
    readonly text: string,
    readonly bytes?: Uint8Array,
  ) {}

  /** Whoever serializes it with plain `JSON.stringify` still gets the right value (at the price of a parse). */
  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/** 48 KiB of bytes (a multiple of 3, so the pieces' base64 joins without padding) per piece. */
const BASE64_PIECE = 3 * 16 * 1024;

/** A piece of a response: text, bytes as they are, or bytes to write as base64 (RFC 4648 section 4). */
type Part = string | { raw: Uint8Array } | { base64: Uint8Array };

/**
 * The bytes of a response body, or its text when nothing in it is held as
 * bytes. Members of `result` that are {@link EncodedJson} are written as
 * they are (their bytes when they have them); everything else goes through
 * `JSON.stringify`. Object member order carries no meaning in JSON
 * (RFC 8259 section 4), so the result parses as the same value either way.
 * Blobs with their bytes at hand (`BLOB_BYTES`) are encoded to base64 in
 * pieces straight into the response buffer, so no one large base64 string
 * is built, scanned for escapes and copied again on the way to the socket.
 */
export function serializeResponse(body: JsonRpcResponseBody): string | Buffer {
  if (!('result' in body)) return JSON.stringify(body);
  const parts: Part[] = [];
  let text = `{"jsonrpc":"2.0","id":${JSON.stringify(body.id)},"result":{`;
  let first = true;
  for (const [name, value] of Object.entries(body.result)) {
    if (value === undefined) continue;
    text += `${first ? '' : ','}${JSON.stringify(name)}:`;
    first = false;
    if (value instanceof EncodedJson) {
      if (value.bytes === undefined) {
        text += value.text;
      } else {
        parts.push(text, { raw: value.bytes });
        text = '';
      }
    } else if (name === 'contents' && Array.isArray(value) && value.some(hasBlobBytes)) {
      text += '[';
      value.forEach((entry: unknown, index) => {
        if (index > 0) text += ',';
        if (!hasBlobBytes(entry)) {
          text += JSON.stringify(entry);
          return;
        }
        let members = '';
        for (const [key, member] of Object.entries(entry)) {
          if (key !== 'blob' && member !== undefined) members += `${JSON.stringify(key)}:${JSON.stringify(member)},`;
        }
        parts.push(`${text}{${members}"blob":"`, { base64: entry[BLOB_BYTES] });
        text = '"}';
      });
      text += ']';
    } else {
      text += JSON.stringify(value);
    }
  }
  text += '}}';
  if (parts.length === 0) return text;
  parts.push(text);
  return assemble(parts);
}

function assemble(parts: readonly Part[]): Buffer {
  let length = 0;
  for (const part of parts) {
    length +=
      typeof part === 'string'
        ? Buffer.byteLength(part)
        : 'raw' in part
          ? part.raw.byteLength
          : Math.ceil(part.base64.byteLength / 3) * 4;
  }
  const out = Buffer.allocUnsafe(length);
  let offset = 0;
  for (const part of parts) {
    if (typeof part === 'string') {
      offset += out.write(part, offset, 'utf8');
    } else if ('raw' in part) {
      out.set(part.raw, offset);
      offset += part.raw.byteLength;
    } else {
      const bytes = Buffer.from(part.base64.buffer, part.base64.byteOffset, part.base64.byteLength);
      for (let at = 0; at < bytes.length; at += BASE64_PIECE) {
        offset += out.write(bytes.subarray(at, at + BASE64_PIECE).toString('base64'), offset, 'latin1');
      }
    }
  }
  return out;
}

function hasBlobBytes(entry: unknown): entry is Record<string, unknown> & { [BLOB_BYTES]: Uint8Array } {
  return typeof entry === 'object' && entry !== null && BLOB_BYTES in entry;
}

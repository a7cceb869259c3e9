import { BLOB_BYTES } from '@mcpgw/core';
import type { JsonRpcResponseBody } from './dispatch.js';

/**
 * A JSON value held as its serialized text, e.g. a cached page's `resources`
 * array: the response is written around it, so a cache hit neither parses
 * the stored text nor serializes the same value again. Whoever builds one
 * vouches that `text` is one complete, valid JSON value.
 */
export class EncodedJson {
  constructor(readonly text: string) {}

  /** Whoever serializes it with plain `JSON.stringify` still gets the right value (at the price of a parse). */
  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/**
 * A response body in pieces, for a result carrying binary contents: text
 * pieces, and bytes to be written as their base64 encoding (RFC 4648
 * section 4) inside the JSON string the text around them opens and closes.
 */
export interface StreamedBody {
  parts: Array<string | Uint8Array>;
  /** Bytes on the wire, UTF-8 text plus the base64 length of every byte piece. */
  length: number;
}

/**
 * The JSON text of a response body. Members of `result` that are
 * {@link EncodedJson} are written as they are; everything else goes through
 * `JSON.stringify`. Object member order carries no meaning in JSON
 * (RFC 8259 section 4), so the text parses as the same value either way.
 * A result whose `contents` hold blobs with their bytes at hand
 * (`BLOB_BYTES`) comes back in pieces, so no one large base64 string is
 * built, scanned for escapes and copied again on the way to the socket.
 */
export function serializeResponse(body: JsonRpcResponseBody): string | StreamedBody {
  if (!('result' in body)) return JSON.stringify(body);
  const parts: Array<string | Uint8Array> = [];
  let text = `{"jsonrpc":"2.0","id":${JSON.stringify(body.id)},"result":{`;
  let first = true;
  for (const [name, value] of Object.entries(body.result)) {
    if (value === undefined) continue;
    text += `${first ? '' : ','}${JSON.stringify(name)}:`;
    first = false;
    if (value instanceof EncodedJson) {
      text += value.text;
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
        parts.push(`${text}{${members}"blob":"`, entry[BLOB_BYTES]);
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
  let length = 0;
  for (const part of parts) {
    length += typeof part === 'string' ? Buffer.byteLength(part) : Math.ceil(part.byteLength / 3) * 4;
  }
  return { parts, length };
}

function hasBlobBytes(entry: unknown): entry is Record<string, unknown> & { [BLOB_BYTES]: Uint8Array } {
  return typeof entry === 'object' && entry !== null && BLOB_BYTES in entry;
}

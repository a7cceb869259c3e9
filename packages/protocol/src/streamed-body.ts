import { Readable } from 'node:stream';
import type { BlobByteStream } from '@mcpgw/core';

/** 48 KiB of bytes (a multiple of 3, so the pieces' base64 joins without padding) per piece. */
export const BASE64_PIECE = 3 * 16 * 1024;

/** A piece of a response: text, bytes as they are, bytes to write as base64 (RFC 4648 section 4), or bytes still arriving. */
export type Part = string | { raw: Uint8Array } | { base64: Uint8Array } | { stream: BlobByteStream };

/**
 * A streamed blob goes out in writes of at least this many bytes: a write per
 * S3 chunk (64 KiB) cost more CPU than the overlap with S3 saved.
 */
const WRITE_AT_LEAST = 256 * 1024;

/** The length of base64 text (with padding) for `bytes` bytes. */
export const base64Length = (bytes: number): number => Math.ceil(bytes / 3) * 4;

/**
 * A response body written while a blob's bytes are still arriving: its exact
 * length (for Content-Length) and the stream of its bytes. The stream fails,
 * without ever ending, when a blob's backend fails or sends a length other
 * than it announced, so the HTTP layer can cut the connection: the client then
 * sees a truncated body (shorter than Content-Length), never a complete JSON
 * document. Whatever precedes the first blob's first bytes is held back until
 * they arrive, so a backend that fails before sending anything fails before
 * the response starts (and the HTTP layer can still answer with an error).
 */
export class StreamedBody {
  constructor(
    readonly byteLength: number,
    readonly stream: Readable,
  ) {}
}

/** Streams `parts` (at least one of them `{ stream }`) as one body. */
export function streamParts(parts: readonly Part[]): StreamedBody {
  let length = 0;
  const streams: BlobByteStream[] = [];
  for (const part of parts) {
    if (typeof part === 'string') length += Buffer.byteLength(part);
    else if ('raw' in part) length += part.raw.byteLength;
    else if ('base64' in part) length += base64Length(part.base64.byteLength);
    else {
      length += base64Length(part.stream.byteLength);
      streams.push(part.stream);
    }
  }
  // Backpressure reaches the backend: at most one gathered write waits here (plus the one the socket
  // holds), so a read holds a bounded few hundred KiB whatever the object's size. A slow client paces
  // the backend's body; the operation deadline still ends a read that outlasts it.
  const stream = Readable.from(pieces(parts), { objectMode: false, highWaterMark: WRITE_AT_LEAST });
  // Ended, failed or abandoned (client gone): a backend stream not read to its end is let go.
  stream.once('close', () => {
    for (const blob of streams) blob.cancel();
  });
  return new StreamedBody(length, stream);
}

async function* pieces(parts: readonly Part[]): AsyncGenerator<Buffer> {
  // Text waiting to be written, copied once into the buffer that goes out.
  let held: string[] = [];
  let heldBytes = 0;
  const hold = (text: string, bytes: number) => {
    held.push(text);
    heldBytes += bytes;
  };
  const flush = (): Buffer => {
    const out = Buffer.allocUnsafe(heldBytes);
    let at = 0;
    for (const text of held) at += out.write(text, at, 'utf8');
    held = [];
    heldBytes = 0;
    return out;
  };
  for (const part of parts) {
    if (typeof part === 'string') {
      hold(part, Buffer.byteLength(part));
    } else if ('raw' in part) {
      if (heldBytes > 0) yield flush();
      yield Buffer.from(part.raw.buffer, part.raw.byteOffset, part.raw.byteLength);
    } else if ('base64' in part) {
      const bytes = Buffer.from(part.base64.buffer, part.base64.byteOffset, part.base64.byteLength);
      for (let at = 0; at < bytes.length; at += BASE64_PIECE) {
        const text = bytes.subarray(at, at + BASE64_PIECE).toString('base64');
        hold(text, text.length);
      }
    } else {
      for await (const text of base64Texts(part.stream)) {
        hold(text, text.length);
        if (heldBytes >= WRITE_AT_LEAST) yield flush();
      }
    }
  }
  if (heldBytes > 0) yield flush();
}

/**
 * The base64 encoding of a blob stream, piece by piece: every piece but the
 * last encodes a multiple of 3 bytes, so the pieces join into exactly the
 * encoding of the whole (RFC 4648 section 4: padding only at the end).
 */
export async function* base64Texts(blob: BlobByteStream): AsyncGenerator<string> {
  let carry: Buffer = Buffer.alloc(0);
  let total = 0;
  for await (const chunk of blob) {
    total += chunk.byteLength;
    // Checked here too: the Content-Length already sent depends on it.
    if (total > blob.byteLength) throw new Error(`a blob stream sent more than its ${blob.byteLength} bytes`);
    let bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (carry.length > 0) {
      // Complete the group of 3 the last chunk left open, without copying this chunk.
      const need = 3 - carry.length;
      if (bytes.length < need) {
        carry = Buffer.concat([carry, bytes]);
        continue;
      }
      yield Buffer.concat([carry, bytes.subarray(0, need)]).toString('base64');
      bytes = bytes.subarray(need);
    }
    const whole = bytes.length - (bytes.length % 3);
    for (let at = 0; at < whole; at += BASE64_PIECE) {
      yield bytes.subarray(at, Math.min(at + BASE64_PIECE, whole)).toString('base64');
    }
    // A copy: the chunk's memory is the stream's, and at most 2 bytes are kept.
    carry = Buffer.from(bytes.subarray(whole));
  }
  if (total !== blob.byteLength) throw new Error(`a blob stream sent ${total} of its ${blob.byteLength} bytes`);
  if (carry.length > 0) yield carry.toString('base64');
}

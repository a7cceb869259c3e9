import { Readable } from 'node:stream';
import type { BlobByteStream } from '@mcpgw/core';

/** 48 KiB of bytes (a multiple of 3, so the pieces' base64 joins without padding) per piece. */
export const BASE64_PIECE = 3 * 16 * 1024;

/** A piece of a response: text, bytes as they are, bytes to write as base64 (RFC 4648 section 4), or bytes still arriving. */
export type Part = string | { raw: Uint8Array } | { base64: Uint8Array } | { stream: BlobByteStream };

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
  const stream = Readable.from(pieces(parts), { objectMode: false });
  // Ended, failed or abandoned (client gone): a backend stream not read to its end is let go.
  stream.once('close', () => {
    for (const blob of streams) blob.cancel();
  });
  return new StreamedBody(length, stream);
}

async function* pieces(parts: readonly Part[]): AsyncGenerator<Buffer> {
  let held: Buffer[] = [];
  for (const part of parts) {
    if (typeof part === 'string') {
      held.push(Buffer.from(part, 'utf8'));
    } else if ('raw' in part) {
      held.push(Buffer.from(part.raw.buffer, part.raw.byteOffset, part.raw.byteLength));
    } else if ('base64' in part) {
      const bytes = Buffer.from(part.base64.buffer, part.base64.byteOffset, part.base64.byteLength);
      for (let at = 0; at < bytes.length; at += BASE64_PIECE) {
        held.push(Buffer.from(bytes.subarray(at, at + BASE64_PIECE).toString('base64'), 'latin1'));
      }
    } else {
      for await (const piece of base64Pieces(part.stream)) {
        if (held.length > 0) {
          held.push(piece);
          yield Buffer.concat(held);
          held = [];
        } else {
          yield piece;
        }
      }
    }
  }
  if (held.length > 0) yield Buffer.concat(held);
}

/**
 * The base64 encoding of a blob stream, piece by piece: each piece encodes a
 * multiple of 3 bytes (the last excepted), so the pieces join into exactly
 * the encoding of the whole (RFC 4648 section 4: padding only at the end).
 */
export async function* base64Pieces(blob: BlobByteStream): AsyncGenerator<Buffer> {
  let carry: Buffer = Buffer.alloc(0);
  let total = 0;
  for await (const chunk of blob) {
    total += chunk.byteLength;
    // Checked here too: the Content-Length already sent depends on it.
    if (total > blob.byteLength) throw new Error(`a blob stream sent more than its ${blob.byteLength} bytes`);
    const incoming = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const bytes = carry.length === 0 ? incoming : Buffer.concat([carry, incoming]);
    const whole = bytes.length - (bytes.length % 3);
    for (let at = 0; at < whole; at += BASE64_PIECE) {
      yield Buffer.from(bytes.subarray(at, Math.min(at + BASE64_PIECE, whole)).toString('base64'), 'latin1');
    }
    // A copy: the chunk's memory is the stream's, and at most 2 bytes are kept.
    carry = Buffer.from(bytes.subarray(whole));
  }
  if (total !== blob.byteLength) throw new Error(`a blob stream sent ${total} of its ${blob.byteLength} bytes`);
  if (carry.length > 0) yield Buffer.from(carry.toString('base64'), 'latin1');
}

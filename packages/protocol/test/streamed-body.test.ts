import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type BlobByteStream, bytesToContents, streamedBlobContents } from '@mcpgw/core';
import { validateResponseBody } from '@mcpgw/test-helpers/wire-schema';
import { within } from '@mcpgw/test-helpers/within';
import type { JsonRpcResponseBody } from '../src/dispatch.js';
import { serializeResponse } from '../src/encoded-json.js';
import { StreamedBody } from '../src/streamed-body.js';

/** A blob stream over `bytes`, cut into chunks of the given sizes (cycled), failing after `failAfter` bytes if set. */
function blobStream(
  bytes: Buffer,
  sizes: readonly number[],
  options: { failAfter?: number; announce?: number } = {},
): BlobByteStream & { cancelled: boolean } {
  const stream = {
    byteLength: options.announce ?? bytes.length,
    cancelled: false,
    async *[Symbol.asyncIterator]() {
      let at = 0;
      for (let i = 0; at < bytes.length; i += 1) {
        if (options.failAfter !== undefined && at >= options.failAfter) throw new Error('backend broke off');
        const size = sizes[i % sizes.length]!;
        yield bytes.subarray(at, at + size);
        at += size;
      }
    },
    cancel() {
      stream.cancelled = true;
    },
  };
  return stream;
}

const response = (contents: unknown[]): JsonRpcResponseBody => ({
  jsonrpc: '2.0',
  id: 'r-1',
  result: { resultType: 'complete', contents, ttlMs: 0, cacheScope: 'private' },
});

/** The body as an HTTP response would carry it: read in flowing mode, as a pipe to the socket does. */
function collect(body: StreamedBody): Promise<{ bytes: Buffer; error?: Error }> {
  const chunks: Buffer[] = [];
  return new Promise((resolve) => {
    body.stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    body.stream.once('end', () => resolve({ bytes: Buffer.concat(chunks) }));
    body.stream.once('error', (error) => resolve({ bytes: Buffer.concat(chunks), error }));
  });
}

const MIB = 1024 * 1024;

describe('a streamed blob in a response', () => {
  it.each([0, 1, 2, 3, 4, MIB - 1, MIB, MIB + 1])(
    'of %i bytes is byte-identical to the whole-bytes encoding and valid on the wire',
    async (size) => {
      const bytes = randomBytes(size);
      const uri = 's3:///objects/blob.bin';
      const whole = serializeResponse(response([bytesToContents(uri, 'application/octet-stream', bytes)]));
      const plain = JSON.stringify(
        response([{ uri, mimeType: 'application/octet-stream', blob: bytes.toString('base64') }]),
      );
      // Odd chunk sizes, so pieces end mid-group of 3 and the carry is exercised.
      const streamed = serializeResponse(
        response([
          streamedBlobContents(uri, 'application/octet-stream', blobStream(bytes, [1, 7, 65_536, 2, 100_000])),
        ]),
      );
      expect(streamed).toBeInstanceOf(StreamedBody);
      if (!(streamed instanceof StreamedBody)) return;
      const { bytes: wire, error } = await collect(streamed);
      expect(error).toBeUndefined();
      expect(streamed.byteLength).toBe(wire.length);
      expect(wire.toString('utf8')).toBe(plain);
      if (whole instanceof StreamedBody) throw new Error('whole bytes are not streamed');
      expect(wire.equals(Buffer.isBuffer(whole) ? whole : Buffer.from(whole))).toBe(true);
      expect(validateResponseBody('2026-07-28', 'resources/read', JSON.parse(plain))).toEqual([]);
    },
  );

  it('writes text and other entries around it unchanged', async () => {
    const bytes = randomBytes(300_000);
    const contents = [
      { uri: 'test://t', mimeType: 'text/plain', text: 'plain "text" ünï' },
      streamedBlobContents('s3:///objects/a.bin', 'image/png', blobStream(bytes, [4096])),
      bytesToContents('s3:///objects/b.bin', 'image/png', bytes.subarray(0, 10)),
    ];
    const expected = JSON.stringify(
      response([
        contents[0],
        { uri: 's3:///objects/a.bin', mimeType: 'image/png', blob: bytes.toString('base64') },
        { uri: 's3:///objects/b.bin', mimeType: 'image/png', blob: bytes.subarray(0, 10).toString('base64') },
      ]),
    );
    const streamed = serializeResponse(response(contents)) as StreamedBody;
    const { bytes: wire } = await collect(streamed);
    expect(wire.toString('utf8')).toBe(expected);
    expect(streamed.byteLength).toBe(Buffer.byteLength(expected));
  });

  it('fails without ever finishing the document when the backend breaks off mid-way', async () => {
    const bytes = randomBytes(MIB);
    const blob = blobStream(bytes, [65_536], { failAfter: 300_000 });
    const streamed = serializeResponse(response([streamedBlobContents('s3:///o/x.bin', 'image/png', blob)]));
    const { bytes: wire, error } = await collect(streamed as StreamedBody);
    expect(error?.message).toBe('backend broke off');
    // What went out is a prefix of the document, shorter than announced, and not JSON.
    expect(wire.length).toBeGreaterThan(0);
    expect(wire.length).toBeLessThan((streamed as StreamedBody).byteLength);
    expect(() => JSON.parse(wire.toString('utf8'))).toThrow();
    expect(blob.cancelled).toBe(true);
  });

  it('sends nothing at all when the backend fails before its first byte', async () => {
    const blob = blobStream(randomBytes(1000), [100], { failAfter: 0 });
    const streamed = serializeResponse(response([streamedBlobContents('s3:///o/x.bin', 'image/png', blob)]));
    const { bytes: wire, error } = await collect(streamed as StreamedBody);
    expect(error?.message).toBe('backend broke off');
    expect(wire.length).toBe(0);
  });

  it('fails when a stream sends a length other than it announced', async () => {
    const short = blobStream(randomBytes(1000), [100], { announce: 1001 });
    const long = blobStream(randomBytes(1000), [100], { announce: 999 });
    const failures = await Promise.all(
      [short, long].map(
        async (blob) =>
          (
            await collect(
              serializeResponse(response([streamedBlobContents('s3:///o/x', 'image/png', blob)])) as StreamedBody,
            )
          ).error?.message,
      ),
    );
    expect(failures).toEqual([
      'a blob stream sent 1000 of its 1001 bytes',
      'a blob stream sent more than its 999 bytes',
    ]);
  });

  it('stops reading the backend while the client takes nothing, holding a bounded part of the object', async () => {
    const bytes = randomBytes(16 * MIB);
    let pulled = 0;
    const blob: BlobByteStream = {
      byteLength: bytes.length,
      async *[Symbol.asyncIterator]() {
        for (let at = 0; at < bytes.length; at += 65_536) {
          pulled = at + 65_536;
          yield bytes.subarray(at, at + 65_536);
        }
      },
      cancel() {},
    };
    const streamed = serializeResponse(
      response([streamedBlobContents('s3:///o/x', 'image/png', blob)]),
    ) as StreamedBody;
    // A client that takes the first piece and then stalls: the backend is read no further than what
    // fills the stream's buffer (backpressure), so a stalled read of any size holds a bounded amount.
    const first = new Promise<number>((resolve) =>
      streamed.stream.once('data', (chunk: Buffer) => {
        streamed.stream.pause();
        resolve(chunk.length);
      }),
    );
    const firstLength = await first;
    // Paused, the stream fills its buffer and then stops asking the backend for more.
    await within(5_000, () => streamed.stream.readableLength >= streamed.stream.readableHighWaterMark);
    await new Promise((resolve) => setImmediate(resolve));
    expect(pulled).toBeLessThan(2 * MIB);
    const pulledWhileStalled = pulled;
    streamed.stream.resume();
    const rest = await collect(streamed);
    expect(rest.error).toBeUndefined();
    expect(firstLength + rest.bytes.length).toBe(streamed.byteLength);
    expect(pulled).toBeGreaterThan(pulledWhileStalled);
  });

  it('lets the backend stream go when the response is abandoned', async () => {
    const blob = blobStream(randomBytes(MIB), [65_536]);
    const streamed = serializeResponse(
      response([streamedBlobContents('s3:///o/x', 'image/png', blob)]),
    ) as StreamedBody;
    const closed = new Promise((resolve) => streamed.stream.once('close', resolve));
    streamed.stream.destroy();
    await closed;
    expect(blob.cancelled).toBe(true);
  });
});

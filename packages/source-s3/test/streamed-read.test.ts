import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { BLOB_STREAM, isGatewayError, isStreamedBlob, silentLogger, type Source } from '@mcpgw/core';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { STREAM_FROM_BYTES } from '../src/s3-access.js';
import { createS3Source } from '../src/s3-source.js';
import { s3SourceOptionsSchema } from '../src/s3-source-options.js';
import { tenantInFlight } from '../src/tenant-slots.js';
import { startFakeS3, type FakeS3 } from './fake-s3-server.js';

// Large binary objects come back as a stream of their body (written into the
// response as it arrives); what a real S3 will not do on demand (fail in the
// middle of a body) comes from the misbehaving fake server.

const sources: Source[] = [];
const servers: FakeS3[] = [];

afterEach(async () => {
  await Promise.all(sources.splice(0).map((each) => each.close()));
});
afterAll(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function backend(answer: (response: ServerResponse) => void): Promise<FakeS3> {
  const server = await startFakeS3((_request, response) => answer(response));
  servers.push(server);
  return server;
}

function source(endpoint: string, tenantId: string): Source {
  const created = createS3Source(
    s3SourceOptionsSchema.parse({
      endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test-secret' },
      bucket: 'bucket',
      maxAttempts: 1,
    }),
    { sourceId: 'objects', tenantId, configDir: '/', logger: silentLogger },
  );
  sources.push(created);
  return created;
}

const answer = (bytes: Buffer, type: string) => (response: ServerResponse) => {
  response.writeHead(200, { 'content-type': type, 'content-length': bytes.length, etag: '"fake"' });
  response.end(bytes);
};

async function drain(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof Error) return error;
  }
  throw new Error('expected a rejection');
}

describe('reading a large binary object', () => {
  it('streams its body, exact to the byte, holding the tenant slot until the body is read', async () => {
    const bytes = randomBytes(STREAM_FROM_BYTES + 1);
    const s3 = await backend(answer(bytes, 'application/octet-stream'));
    const read = await source(s3.endpoint, 't-stream').read('s3:///objects/big.bin');
    const entry = read?.[0];
    expect(isStreamedBlob(entry)).toBe(true);
    if (!isStreamedBlob(entry)) return;
    expect(entry).toMatchObject({ uri: 's3:///objects/big.bin', mimeType: 'application/octet-stream' });
    expect(entry[BLOB_STREAM].byteLength).toBe(bytes.length);
    // Its text form cannot be taken by accident: a stream is written once, by the response writer.
    expect(() => (entry as { blob: string }).blob).toThrow(/streamed/);
    expect(tenantInFlight('t-stream')).toBe(1);
    expect((await drain(entry[BLOB_STREAM])).equals(bytes)).toBe(true);
    expect(tenantInFlight('t-stream')).toBe(0);
    // Read once.
    await expect(drain(entry[BLOB_STREAM])).rejects.toThrow(/read once/);
  });

  it('keeps smaller objects and text whole, as before', async () => {
    const small = randomBytes(STREAM_FROM_BYTES - 1);
    const text = Buffer.from('x'.repeat(STREAM_FROM_BYTES + 10));
    const s3small = await backend(answer(small, 'application/octet-stream'));
    const s3text = await backend(answer(text, 'text/plain'));
    const [smallEntry] = (await source(s3small.endpoint, 't-whole').read('s3:///objects/a.bin')) ?? [];
    const [textEntry] = (await source(s3text.endpoint, 't-whole').read('s3:///objects/a.txt')) ?? [];
    expect(isStreamedBlob(smallEntry)).toBe(false);
    expect(Buffer.from((smallEntry as { blob: string }).blob, 'base64').equals(small)).toBe(true);
    expect(isStreamedBlob(textEntry)).toBe(false);
    expect((textEntry as { text: string }).text).toBe(text.toString());
  });

  it('fails the stream with MCPGW_SOURCE_UNAVAILABLE when S3 breaks off mid-body, and frees the slot', async () => {
    const bytes = randomBytes(STREAM_FROM_BYTES * 2);
    const s3 = await backend((response) => {
      response.writeHead(200, { 'content-type': 'image/png', 'content-length': bytes.length });
      // A third of the body, then the connection drops.
      response.write(bytes.subarray(0, STREAM_FROM_BYTES / 2), () => response.socket?.destroy());
    });
    const [entry] = (await source(s3.endpoint, 't-cut').read('s3:///objects/cut.png')) ?? [];
    if (!isStreamedBlob(entry)) throw new Error('expected a streamed blob');
    const error = await rejection(drain(entry[BLOB_STREAM]));
    expect(isGatewayError(error) && error.code).toBe('MCPGW_SOURCE_UNAVAILABLE');
    expect(error.message).toBe('S3 source "objects" failed while sending an object');
    expect(tenantInFlight('t-cut')).toBe(0);
  });

  it('frees the slot and the connection when the stream is let go unread', async () => {
    const bytes = randomBytes(STREAM_FROM_BYTES);
    let closed!: () => void;
    const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
    const s3 = await backend((response) => {
      response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length });
      response.write(bytes.subarray(0, 1024));
      response.once('close', closed);
    });
    const [entry] = (await source(s3.endpoint, 't-cancel').read('s3:///objects/left.bin')) ?? [];
    if (!isStreamedBlob(entry)) throw new Error('expected a streamed blob');
    expect(tenantInFlight('t-cancel')).toBe(1);
    entry[BLOB_STREAM].cancel();
    expect(tenantInFlight('t-cancel')).toBe(0);
    await connectionClosed;
  });
});

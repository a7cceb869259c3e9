import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BLOB_STREAM, type BlobByteStream, isStreamedBlob, streamedBlobContents } from '@mcpgw/core';
import type { ReadOutcome } from '@mcpgw/protocol';
import { createCachingResourceService } from '../src/caching-resource-service.js';
import { createGatewayCache } from '../src/gateway-cache.js';
import { fakeService } from './fake-service.js';

const signal = new AbortController().signal;

/** A blob stream of `bytes`, readable once, as a backend hands it over. */
function stream(bytes: Buffer): BlobByteStream {
  return {
    byteLength: bytes.length,
    async *[Symbol.asyncIterator]() {
      yield bytes;
    },
    cancel() {},
  };
}

describe('a read whose blob is still arriving', () => {
  it('goes to its caller as it is, is never stored, and a concurrent identical read reads for itself', async () => {
    const cache = createGatewayCache({ key: randomBytes(32) });
    const inner = fakeService('streamed');
    const bytes = randomBytes(1000);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    inner.read = async (uri): Promise<ReadOutcome> => {
      inner.calls.read += 1;
      // The first call waits, so the second joins its flight.
      if (inner.calls.read === 1) await gate;
      return { contents: [streamedBlobContents(uri, 'image/png', stream(bytes))], ttlMs: 60_000 };
    };
    const service = createCachingResourceService(inner, { tenantId: 't', fingerprint: 'f', cache });
    const first = service.read('test://big.png', signal);
    const joined = service.read('test://big.png', signal);
    release();
    const outcomes = await Promise.all([first, joined]);
    // Each caller got a stream of its own, with the freshness the source gave.
    expect(inner.calls.read).toBe(2);
    for (const outcome of outcomes) {
      const entry = outcome?.contents[0];
      expect(isStreamedBlob(entry)).toBe(true);
      expect(outcome?.ttlMs).toBe(60_000);
    }
    expect(outcomes[0]?.contents[0] === outcomes[1]?.contents[0]).toBe(false);
    // Nothing was stored: the next read asks the source again.
    const again = await service.read('test://big.png', signal);
    expect(inner.calls.read).toBe(3);
    const entry = again?.contents[0];
    if (!isStreamedBlob(entry)) throw new Error('expected a streamed blob');
    const chunks: Uint8Array[] = [];
    for await (const chunk of entry[BLOB_STREAM]) chunks.push(chunk);
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
    await cache.close();
  });
});

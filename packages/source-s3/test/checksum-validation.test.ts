import { isGatewayError, silentLogger, type Source } from '@mcpgw/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createS3Source } from '../src/s3-source.js';
import { s3SourceOptionsSchema } from '../src/s3-source-options.js';
import { startFakeS3, type FakeS3 } from './fake-s3-server.js';

// An object whose stored checksum does not match its body, as S3 would report a corrupted one:
// with verifyChecksums (the default) the read asks for the checksum and fails; without it the
// read asks for none and answers the body. The backend answers like S3: the checksum header
// only when the request carries x-amz-checksum-mode: ENABLED.

const opened: Array<Source | FakeS3> = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((item) => item.close()));
});

/** A backend serving one text object with a CRC32 that is not its body's; records the checksum mode asked for. */
async function corruptedObject(): Promise<FakeS3 & { asked: Array<string | undefined> }> {
  const asked: Array<string | undefined> = [];
  const backend = await startFakeS3((request, response) => {
    const mode = request.headers['x-amz-checksum-mode'];
    asked.push(typeof mode === 'string' ? mode : undefined);
    response.writeHead(200, {
      'content-type': 'text/plain',
      'content-length': 5,
      etag: '"fake"',
      // The CRC32 of "world", not of "hello".
      ...(mode === 'ENABLED' ? { 'x-amz-checksum-crc32': 'OncRQw==' } : {}),
    });
    response.end('hello');
  });
  opened.push(backend);
  return Object.assign(backend, { asked });
}

function sourceFor(endpoint: string, verifyChecksums?: boolean): Source {
  const source = createS3Source(
    s3SourceOptionsSchema.parse({
      endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test-secret' },
      bucket: 'checked-bucket',
      maxAttempts: 1,
      ...(verifyChecksums === undefined ? {} : { verifyChecksums }),
    }),
    { sourceId: 'checked', tenantId: `t-${String(verifyChecksums)}`, configDir: '/', logger: silentLogger },
  );
  opened.push(source);
  return source;
}

describe('S3 checksum validation', () => {
  it('by default asks for the stored checksum and refuses a body that does not match it', async () => {
    const backend = await corruptedObject();
    const error = await sourceFor(backend.endpoint)
      .read('s3:///checked/a.txt')
      .then(
        () => undefined,
        (rejected: unknown) => rejected,
      );
    expect(isGatewayError(error) && error.code).toBe('MCPGW_SOURCE_UNAVAILABLE');
    expect(backend.asked).toEqual(['ENABLED']);
  });

  it('with verifyChecksums false asks for none and answers the body', async () => {
    const backend = await corruptedObject();
    expect(await sourceFor(backend.endpoint, false).read('s3:///checked/a.txt')).toEqual([
      expect.objectContaining({ uri: 's3:///checked/a.txt', text: 'hello' }),
    ]);
    expect(backend.asked).toEqual([undefined]);
  });
});

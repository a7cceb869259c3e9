import { isGatewayError, silentLogger, type Source } from '@mcpgw/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createS3Client } from '../src/s3-client.js';
import { createS3Source } from '../src/s3-source.js';
import { s3SourceOptionsSchema } from '../src/s3-source-options.js';
import { answerObject, startFakeS3, type FakeS3 } from './fake-s3-server.js';

// A throttled read (503 SlowDown) retries only when the backoff and an attempt fit in what is
// left of its operation's budget (requestTimeoutMs × maxAttempts); otherwise it fails at once
// with MCPGW_SOURCE_UNAVAILABLE naming throttling. The backend is a controlled server; the
// retries' jitter is fixed, so the backoff is known and nothing waits on chance.

const opened: Array<Source | FakeS3> = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((item) => item.close()));
});

const REQUEST_TIMEOUT_MS = 500;
const MAX_ATTEMPTS = 2;
const BUDGET_MS = REQUEST_TIMEOUT_MS * MAX_ATTEMPTS;

/** A backend that throttles its first request and then serves the object. */
async function throttlingOnce(): Promise<FakeS3> {
  let throttled = false;
  const backend = await startFakeS3(async (_request, response) => {
    if (!throttled) {
      throttled = true;
      response.writeHead(503, { 'content-type': 'application/xml' });
      response.end('<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>');
      return;
    }
    await answerObject(response, 'hello');
  });
  opened.push(backend);
  return backend;
}

/** The source, its retries' jitter fixed at `jitter` (the backoff is jitter × 1 s, the SDK's throttling base). */
function throttledSource(endpoint: string, jitter: number): Source {
  const options = s3SourceOptionsSchema.parse({
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test-secret' },
    bucket: 'throttled-bucket',
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    maxAttempts: MAX_ATTEMPTS,
  });
  const source = createS3Source(
    options,
    { sourceId: 'throttled', tenantId: `t-${jitter}`, configDir: '/', logger: silentLogger },
    createS3Client(options, undefined, () => jitter),
  );
  opened.push(source);
  return source;
}

describe('a throttled S3 read within its budget', () => {
  it('is not retried when the backoff would leave no time for the retry: the answer names throttling at once', async () => {
    const backend = await throttlingOnce();
    // A 950 ms backoff plus a 100 ms attempt is past the 1000 ms budget.
    const source = throttledSource(backend.endpoint, 0.95);
    const started = performance.now();
    const error = await source.read('s3:///throttled/a.txt').then(
      () => undefined,
      (rejected: unknown) => rejected,
    );
    const ms = performance.now() - started;
    expect(isGatewayError(error) && error.code).toBe('MCPGW_SOURCE_UNAVAILABLE');
    expect((error as Error).message).toBe(
      `S3 source "throttled" is throttling requests: no time left to retry within ${BUDGET_MS} ms`,
    );
    expect(backend.requests).toBe(1);
    // Answered rather than slept into the deadline (the SDK's own strategy waited out the backoff).
    expect(ms).toBeLessThan(BUDGET_MS / 2);
  });

  it('is retried when the backoff and an attempt fit, and answers', async () => {
    const backend = await throttlingOnce();
    // A 200 ms backoff leaves the retry about 800 ms.
    const source = throttledSource(backend.endpoint, 0.2);
    expect(await source.read('s3:///throttled/a.txt')).toEqual([
      expect.objectContaining({ uri: 's3:///throttled/a.txt', text: 'hello' }),
    ]);
    expect(backend.requests).toBe(2);
  });
});

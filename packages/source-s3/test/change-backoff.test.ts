import type { S3Client } from '@aws-sdk/client-s3';
import type { Logger } from '@mcpgw/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createS3Source } from '../src/s3-source.js';
import { s3SourceOptionsSchema } from '../src/s3-source-options.js';

/**
 * A bucket that cannot be reached made the change
 * poller scan (and warn) at its interval forever. Failed scans now back off
 * from the interval to the 30 s cap, and warnings are condensed.
 */
afterEach(() => {
  vi.useRealTimers();
});

describe('S3 change detection against an unreachable endpoint', () => {
  it('backs off and condenses its warnings', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const warnings: object[] = [];
    const logger: Logger = {
      debug: () => {},
      info: () => {},
      warn: (fields, msg) => {
        if (msg?.includes('change detection') === true) warnings.push(fields);
      },
      error: () => {},
      child: () => logger,
    };
    let sends = 0;
    const client = {
      send: async () => {
        sends += 1;
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { name: 'Error', code: 'ECONNREFUSED' });
      },
      destroy: () => {},
    } as unknown as S3Client;
    const source = createS3Source(
      s3SourceOptionsSchema.parse({ bucket: 'b-1', changeDetection: { mode: 'poll', intervalMs: 100 } }),
      { sourceId: 'files', tenantId: 'acme', configDir: '/', logger },
      client,
    );
    const stop = source.watch!(() => {});
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    stop();
    await source.close();

    // Ten minutes: 250 ms doubling to 30 s is under 30 scans; at the 100 ms interval it was 6,000.
    expect(sends).toBeLessThan(40);
    expect(warnings.length).toBeLessThanOrEqual(Math.floor(Math.log2(sends)) + 1);
    expect(warnings.map((w) => (w as { attempt?: number }).attempt)).toEqual(
      [1, 2, 4, 8, 16, 32].filter((n) => n <= sends),
    );
  });
});

import { describe, expect, it } from 'vitest';
import { s3SourceFactory } from '../src/s3-source-factory.js';

async function validate(input: unknown) {
  return s3SourceFactory.optionsSchema['~standard'].validate(input);
}

describe('S3 source options', () => {
  it('apply the documented defaults', async () => {
    const result = await validate({ bucket: 'my-bucket' });
    expect(result.issues).toBeUndefined();
    expect('value' in result && result.value).toEqual({
      bucket: 'my-bucket',
      region: 'us-east-1',
      prefix: '',
      forcePathStyle: false,
      maxObjectBytes: 10 * 1024 * 1024,
      folderRead: { maxObjects: 100, maxTotalBytes: 10 * 1024 * 1024 },
      verifyChecksums: true,
      requestTimeoutMs: 5_000,
      maxAttempts: 3,
      maxInFlightPerTenant: 16,
      changeDetection: { mode: 'poll', intervalMs: 60_000 },
    });
    expect(s3SourceFactory.type).toBe('s3');
  });

  it('refuse typos and bad values, naming the path', async () => {
    const cases: Array<[unknown, string]> = [
      [{ bucket: 'b-1', bukket: 'x' }, ''],
      [{ bucket: 'b-1', folderRead: { maxObject: 3 } }, 'folderRead'],
      [{ bucket: 'b-1', changeDetection: { mode: 'events' } }, 'changeDetection.mode'],
      [{ bucket: 'b-1', prefix: 'reports' }, 'prefix'],
      [{ bucket: 'b-1', prefix: '/reports/' }, 'prefix'],
      [{ bucket: 'b-1', endpoint: 'ftp://host' }, 'endpoint'],
      [{ bucket: 'b-1', endpoint: 'http://user:pw@host:9000' }, 'endpoint'],
      [{ bucket: 'b-1', maxAttempts: 0 }, 'maxAttempts'],
      [{ bucket: 'b-1', requestTimeoutMs: 1.5 }, 'requestTimeoutMs'],
      [{ bucket: 'b-1', maxInFlightPerTenant: 0 }, 'maxInFlightPerTenant'],
      [{ bucket: 'b-1', folderRead: { maxObjects: 5000 } }, 'folderRead.maxObjects'],
      [{ bucket: 'x' }, 'bucket'],
      [{ bucket: 'b-1', credentials: { accessKeyId: 'a' } }, 'credentials.secretAccessKey'],
      [{ bucket: 'b-1', credentials: { $env: 'S3_SECRET' } }, 'credentials'],
    ];
    for (const [input, path] of cases) {
      const result = await validate(input);
      expect(result.issues, JSON.stringify(input)).toBeDefined();
      const paths = (result.issues ?? []).map((issue) =>
        (issue.path ?? []).map((part) => (typeof part === 'object' ? part.key : part)).join('.'),
      );
      expect(paths, JSON.stringify(input)).toContain(path);
    }
  });

  it('never echo a secret in a validation error', async () => {
    const result = await validate({
      bucket: 'b-1',
      credentials: { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'TOP-SECRET-VALUE', extra: true },
    });
    expect(result.issues).toBeDefined();
    expect(JSON.stringify(result.issues)).not.toContain('TOP-SECRET-VALUE');
  });
});

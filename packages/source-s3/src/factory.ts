import { S3Client } from '@aws-sdk/client-s3';
import type { SourceContext, SourceFactory } from '@mcpgw/core';
import { s3SourceOptionsSchema, type S3SourceOptions } from './options.js';
import { S3Source } from './s3-source.js';
import { uriPrefix } from './uri.js';

/**
 * Creates an S3 source. No I/O happens here: a bucket that is down at
 * startup must not stop the gateway (other tenants keep working);
 * `health()` reports it.
 */
export function createS3Source(options: S3SourceOptions, context: SourceContext): S3Source {
  const client = new S3Client({
    region: options.region,
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    forcePathStyle: options.forcePathStyle,
    // Absent: the SDK's default provider chain. A copy, because the SDK
    // writes bookkeeping fields (`$source`) into the object it is given.
    ...(options.credentials === undefined ? {} : { credentials: { ...options.credentials } }),
    // The SDK's standard retry strategy: exponential backoff with jitter on
    // throttling, 5xx, connection errors and timeouts.
    maxAttempts: options.maxAttempts,
    requestHandler: {
      connectionTimeout: options.requestTimeoutMs,
      requestTimeout: options.requestTimeoutMs,
      // Without this the SDK only logs a breached requestTimeout.
      throwOnRequestTimeout: true,
    },
  });
  return new S3Source(client, options, context);
}

/** The `type: "s3"` source (issue 6). */
export const s3SourceFactory: SourceFactory<S3SourceOptions> = {
  type: 's3',
  optionsSchema: s3SourceOptionsSchema,
  create: createS3Source,
  // An S3 key may hold `//` (an empty segment), so a pattern may too.
  uriSpace: (_options, sourceId) => ({ prefixes: [uriPrefix(sourceId)], emptySegments: true }),
};
